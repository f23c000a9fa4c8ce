package sinktest

import (
	"math"
	"reflect"
	"time"

	"github.com/databrew/databrew-stage/sink"
)

// expected returns what a reader should find for r: the user values with
// timestamps cut to microseconds in UTC and nil slices as empty lists,
// then the system columns.
func expected(r sink.Row) []any {
	out := make([]any, 0, len(r.Values)+6)
	for _, v := range r.Values {
		out = append(out, normalize(v))
	}
	return append(out, r.Key, r.URL, r.Change, micro(r.FetchedAt), r.RunID, r.Hash)
}

// normalize returns v as written: microsecond UTC times, non-nil slices.
func normalize(v any) any {
	switch v := v.(type) {
	case time.Time:
		return micro(v)
	case []time.Time:
		out := make([]time.Time, len(v))
		for i, t := range v {
			out[i] = micro(t)
		}
		return out
	case []string:
		return nonNil(v)
	case []int64:
		return nonNil(v)
	case []float64:
		return nonNil(v)
	case []bool:
		return nonNil(v)
	}
	return v
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

// micro cuts t to microseconds (toward the past) in UTC.
func micro(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro()).UTC() }

// same reports whether two values are equal: times by instant and zone,
// floats bit for bit apart from NaN payloads.
func same(a, b any) bool {
	switch a := a.(type) {
	case time.Time:
		b, ok := b.(time.Time)
		return ok && a.Equal(b) && a.Location() == b.Location()
	case []time.Time:
		b, ok := b.([]time.Time)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !same(a[i], b[i]) {
				return false
			}
		}
		return true
	case float64:
		b, ok := b.(float64)
		return ok && (math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b))
	case []float64:
		b, ok := b.([]float64)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !same(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
