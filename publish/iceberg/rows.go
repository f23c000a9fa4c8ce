package iceberg

import (
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/databrew/databrew-stage/sink"
)

// batchRows is how many rows one Arrow record batch holds at most, so
// that memory stays flat however many rows a run has.
const batchRows = 16 << 10

// appender appends one value of a row to a column builder.
type appender func(b array.Builder, r *sink.Row) error

// converter turns sink rows into Arrow record batches of the table's
// Arrow schema.
type converter struct {
	schema *arrow.Schema
	cols   []appender
	nUser  int
}

// newConverter maps each column of the table's Arrow schema to what fills
// it: a user column of the export by name, a stage column, or NULL for a
// table column the export lacks (one a concurrent writer just added).
func newConverter(schema *arrow.Schema, user []sink.Column) (*converter, error) {
	byName := make(map[string]int, len(user))
	for i, c := range user {
		byName[c.Name] = i
	}
	cv := &converter{schema: schema, cols: make([]appender, schema.NumFields()), nUser: len(user)}
	for i, f := range schema.Fields() {
		var a appender
		switch f.Name {
		case ColumnKey:
			a = stringColumn(func(r *sink.Row) string { return r.Key })
		case ColumnChange:
			a = stringColumn(func(r *sink.Row) string { return r.Change })
		case ColumnURL:
			a = stringColumn(func(r *sink.Row) string { return r.URL })
		case ColumnRunID:
			a = stringColumn(func(r *sink.Row) string { return r.RunID })
		case ColumnSeenAt:
			a = func(b array.Builder, r *sink.Row) error {
				tb, ok := b.(*array.TimestampBuilder)
				if !ok {
					return fmt.Errorf("column %s: arrow type %s is not a timestamp", ColumnSeenAt, b.Type())
				}
				if r.FetchedAt.IsZero() {
					return errors.New("no fetch time")
				}
				tb.Append(arrow.Timestamp(r.FetchedAt.UnixMicro()))
				return nil
			}
		default:
			idx, ok := byName[f.Name]
			if !ok {
				if !f.Nullable {
					return nil, fmt.Errorf("the table has required column %s, the config has no field %s", f.Name, f.Name)
				}
				a = func(b array.Builder, _ *sink.Row) error { b.AppendNull(); return nil }
				break
			}
			a = userColumn(idx, f.Name)
		}
		cv.cols[i] = a
	}
	return cv, nil
}

// stringColumn appends the string get returns.
func stringColumn(get func(r *sink.Row) string) appender {
	return func(b array.Builder, r *sink.Row) error {
		sb, ok := b.(*array.StringBuilder)
		if !ok {
			return fmt.Errorf("arrow type %s is not a string", b.Type())
		}
		sb.Append(get(r))
		return nil
	}
}

// userColumn appends the value of user column idx.
func userColumn(idx int, name string) appender {
	return func(b array.Builder, r *sink.Row) error {
		v := r.Values[idx]
		if v == nil {
			b.AppendNull()
			return nil
		}
		if err := appendValue(b, v); err != nil {
			return fmt.Errorf("column %s: %w", name, err)
		}
		return nil
	}
}

// appendValue appends the non-nil value v (a scalar or a slice of them
// for a list column) to b.
func appendValue(b array.Builder, v any) error {
	switch b := b.(type) {
	case *array.StringBuilder:
		if s, ok := v.(string); ok {
			b.Append(s)
			return nil
		}
	case *array.Int64Builder:
		if n, ok := v.(int64); ok {
			b.Append(n)
			return nil
		}
	case *array.Float64Builder:
		if f, ok := v.(float64); ok {
			b.Append(f)
			return nil
		}
	case *array.BooleanBuilder:
		if x, ok := v.(bool); ok {
			b.Append(x)
			return nil
		}
	case *array.TimestampBuilder:
		if t, ok := v.(time.Time); ok {
			b.Append(arrow.Timestamp(t.UnixMicro()))
			return nil
		}
	case *array.ListBuilder:
		return appendList(b, v)
	}
	return fmt.Errorf("%T does not fit arrow type %s", v, b.Type())
}

// appendList appends the slice v as one list (a nil slice is an empty
// list).
func appendList(b *array.ListBuilder, v any) error {
	vb := b.ValueBuilder()
	var err error
	switch s := v.(type) {
	case []string:
		err = appendEach(b, vb, s)
	case []int64:
		err = appendEach(b, vb, s)
	case []float64:
		err = appendEach(b, vb, s)
	case []bool:
		err = appendEach(b, vb, s)
	case []time.Time:
		err = appendEach(b, vb, s)
	default:
		err = fmt.Errorf("%T does not fit arrow type %s", v, b.Type())
	}
	return err
}

// appendEach appends the elements of s as one list of b.
func appendEach[T any](b *array.ListBuilder, vb array.Builder, s []T) error {
	b.Append(true)
	for _, x := range s {
		if err := appendValue(vb, x); err != nil {
			return err
		}
	}
	return nil
}

// errStopped is what a rows callback returns once the writer stopped
// reading batches.
var errStopped = errors.New("the data file writer stopped reading rows")

// batches returns rows as record batches of at most batchRows rows. The
// consumer owns (and releases) each batch it receives.
func (cv *converter) batches(rows func(yield func(sink.Row) error) error) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, cv.schema)
		defer b.Release()
		n := 0
		stopped := false
		err := rows(func(r sink.Row) error {
			if len(r.Values) != cv.nUser {
				return fmt.Errorf("row %q: %d values for %d user columns", r.Key, len(r.Values), cv.nUser)
			}
			for i, a := range cv.cols {
				if err := a(b.Field(i), &r); err != nil {
					return fmt.Errorf("row %q: %w", r.Key, err)
				}
			}
			n++
			if n < batchRows {
				return nil
			}
			n = 0
			if !yield(b.NewRecordBatch(), nil) {
				stopped = true
				return errStopped
			}
			return nil
		})
		switch {
		case stopped:
			return
		case err != nil:
			yield(nil, err)
		case n > 0:
			yield(b.NewRecordBatch(), nil)
		}
	}
}
