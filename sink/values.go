package sink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/databrew/databrew-stage/extract"
)

// DecodeValues turns the JSON array of an item's values, as stored in the
// state, back into typed values for the user columns of s (see Row.Values):
// numbers become int64 or float64 exactly as the column type says,
// timestamps are RFC 3339 strings read back in UTC, null becomes nil and
// lists become typed slices. An array of another length than the user
// columns, a value of the wrong JSON type and a JSON null instead of the
// array (a removed item's values; see NullValues) are errors.
func DecodeValues(s Schema, raw []byte) ([]any, error) {
	user := s.User()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var arr []any
	if err := dec.Decode(&arr); err != nil {
		return nil, fmt.Errorf("decode values: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("decode values: data after the array")
	}
	if arr == nil {
		return nil, fmt.Errorf("decode values: null, want an array of %d values", len(user))
	}
	if len(arr) != len(user) {
		return nil, fmt.Errorf("decode values: %d values for %d columns", len(arr), len(user))
	}
	out := make([]any, len(arr))
	for i, v := range arr {
		var err error
		if out[i], err = decodeValue(&user[i], v); err != nil {
			return nil, fmt.Errorf("decode values: column %q: %w", user[i].Name, err)
		}
	}
	return out, nil
}

// NullValues returns a NULL for every user column of s, the values of a
// removed item.
func NullValues(s Schema) []any { return make([]any, len(s.User())) }

// decodeValue converts one decoded JSON value (json.Number for numbers) to
// the Go type of column c.
func decodeValue(c *Column, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if !c.List {
		return decodeScalar(c.Type, v)
	}
	elems, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is not a JSON array", jsonKind(v))
	}
	switch c.Type {
	case extract.TypeString:
		return decodeList[string](c.Type, elems)
	case extract.TypeInt64:
		return decodeList[int64](c.Type, elems)
	case extract.TypeFloat64:
		return decodeList[float64](c.Type, elems)
	case extract.TypeBool:
		return decodeList[bool](c.Type, elems)
	case extract.TypeTimestamp:
		return decodeList[time.Time](c.Type, elems)
	}
	return nil, fmt.Errorf("unknown type %q", c.Type)
}

// decodeList converts the elements of a JSON array to a []T; a null
// element is an error.
func decodeList[T any](typ extract.Type, elems []any) ([]T, error) {
	out := make([]T, len(elems))
	for i, e := range elems {
		if e == nil {
			return nil, fmt.Errorf("element %d is null", i)
		}
		v, err := decodeScalar(typ, e)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out[i] = v.(T)
	}
	return out, nil
}

// decodeScalar converts a non-null JSON value to the Go type of typ.
func decodeScalar(typ extract.Type, v any) (any, error) {
	switch typ {
	case extract.TypeString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case extract.TypeInt64:
		if n, ok := v.(json.Number); ok {
			i, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("int64: %w", err)
			}
			return i, nil
		}
	case extract.TypeFloat64:
		if n, ok := v.(json.Number); ok {
			f, err := strconv.ParseFloat(string(n), 64)
			if err != nil {
				return nil, fmt.Errorf("float64: %w", err)
			}
			return f, nil
		}
	case extract.TypeBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case extract.TypeTimestamp:
		if s, ok := v.(string); ok {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return nil, fmt.Errorf("timestamp: %w", err)
			}
			return t.UTC(), nil
		}
	default:
		return nil, fmt.Errorf("unknown type %q", typ)
	}
	return nil, fmt.Errorf("%s is not a %s", jsonKind(v), typ)
}

// jsonKind names the JSON type of a decoded value for messages.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "JSON string"
	case json.Number:
		return "JSON number"
	case bool:
		return "JSON bool"
	case []any:
		return "JSON array"
	case map[string]any:
		return "JSON object"
	}
	return fmt.Sprintf("%T", v)
}
