// Package sinktest is the conformance suite of the sink file formats: each
// format's tests write files with a sink.FileSet and read them back with an
// independent reader, and Run checks what the reader saw.
package sinktest

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/databrew/databrew-stage/extract"
)

// Column is a column as a reader sees it.
type Column struct {
	Name string
	// Type is the type of the values, of the elements for a list; empty
	// for a type the sink never writes.
	Type extract.Type
	List bool
	// Nullable reports whether the column may hold NULL.
	Nullable bool
	// ElemNullable reports whether a list's elements may be NULL.
	ElemNullable bool
	// TimeZone and TimeUnit describe a timestamp ("UTC", "us").
	TimeZone, TimeUnit string
}

// ReadBack is what a reader found in one file.
type ReadBack struct {
	Columns []Column
	// Rows holds every column's value per row, as sink.Row.Values holds
	// user values (time.Time in UTC); system columns are strings and a
	// time.Time.
	Rows [][]any
	// Metadata is the file's key/value (Parquet) or schema (Arrow)
	// metadata, without keys a reader adds itself.
	Metadata map[string]string
	// Groups is the number of rows of each row group or record batch.
	Groups []int64
}

// Reader reads one file written by a sink.FileSet.
type Reader func(t testing.TB, path string) ReadBack

// ColumnsOf describes the fields of an Arrow schema.
func ColumnsOf(s *arrow.Schema) []Column {
	cols := make([]Column, s.NumFields())
	for i, f := range s.Fields() {
		c := Column{Name: f.Name, Nullable: f.Nullable}
		typ := f.Type
		if l, ok := typ.(*arrow.ListType); ok {
			c.List, c.ElemNullable = true, l.ElemField().Nullable
			typ = l.Elem()
		}
		switch typ.ID() {
		case arrow.STRING:
			c.Type = extract.TypeString
		case arrow.INT64:
			c.Type = extract.TypeInt64
		case arrow.FLOAT64:
			c.Type = extract.TypeFloat64
		case arrow.BOOL:
			c.Type = extract.TypeBool
		case arrow.TIMESTAMP:
			ts := typ.(*arrow.TimestampType)
			c.Type, c.TimeZone, c.TimeUnit = extract.TypeTimestamp, ts.TimeZone, ts.Unit.String()
		}
		cols[i] = c
	}
	return cols
}

// AppendRecord appends the rows of rec to rows.
func AppendRecord(rows [][]any, rec arrow.RecordBatch) ([][]any, error) {
	n := int(rec.NumRows())
	start := len(rows)
	for range n {
		rows = append(rows, make([]any, rec.NumCols()))
	}
	for j, col := range rec.Columns() {
		for i := range n {
			v, err := value(col, i)
			if err != nil {
				return nil, fmt.Errorf("column %q row %d: %w", rec.ColumnName(j), i, err)
			}
			rows[start+i][j] = v
		}
	}
	return rows, nil
}

// value returns element i of a, nil when null.
func value(a arrow.Array, i int) (any, error) {
	if a.IsNull(i) {
		return nil, nil
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Timestamp:
		return time.UnixMicro(int64(a.Value(i))).UTC(), nil
	case *array.List:
		start, end := a.ValueOffsets(i)
		return listValue(a.ListValues(), int(start), int(end))
	}
	return nil, fmt.Errorf("unexpected array type %s", a.DataType())
}

// listValue returns elements [start, end) of a as a typed slice.
func listValue(a arrow.Array, start, end int) (any, error) {
	switch a.DataType().ID() {
	case arrow.STRING:
		return elems[string](a, start, end)
	case arrow.INT64:
		return elems[int64](a, start, end)
	case arrow.FLOAT64:
		return elems[float64](a, start, end)
	case arrow.BOOL:
		return elems[bool](a, start, end)
	case arrow.TIMESTAMP:
		return elems[time.Time](a, start, end)
	}
	return nil, fmt.Errorf("unexpected list element type %s", a.DataType())
}

// elems collects elements [start, end) of a, which must not be null.
func elems[T any](a arrow.Array, start, end int) ([]T, error) {
	out := make([]T, 0, end-start)
	for i := start; i < end; i++ {
		v, err := value(a, i)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, fmt.Errorf("null list element %d", i-start)
		}
		out = append(out, v.(T))
	}
	return out, nil
}
