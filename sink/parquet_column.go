package sink

import (
	"time"
	"unsafe"

	"github.com/databrew/databrew-stage/extract"
	"github.com/parquet-go/parquet-go"
)

// parquetColumn builds the values of one leaf column for its column
// writer. The caller's goroutine owns vals, the batch being built; the
// column's goroutine owns the batches queued on jobs and returns their
// buffers on free.
type parquetColumn struct {
	col    *Column
	w      *parquet.ColumnWriter
	index  int // leaf column index
	maxDef int // definition level of a present value (list element)
	vals   []parquet.Value
	jobs   chan []parquet.Value
	free   chan []parquet.Value
	err    error // the column goroutine's first error
}

// newParquetColumn returns a column with parquetQueueDepth spare buffers.
func newParquetColumn(c *Column, w *parquet.ColumnWriter, index, maxDef int) parquetColumn {
	free := make(chan []parquet.Value, parquetQueueDepth+1)
	for range parquetQueueDepth {
		free <- nil
	}
	return parquetColumn{col: c, w: w, index: index, maxDef: maxDef, free: free}
}

// send queues the built batch and takes a spare buffer for the next one,
// waiting when the column is parquetQueueDepth batches behind.
func (c *parquetColumn) send() {
	c.jobs <- c.vals
	c.vals = <-c.free
}

// run writes the queued batches in order, then compresses the last page
// of the row group; after an error it only recycles the buffers.
func (c *parquetColumn) run(jobs <-chan []parquet.Value) {
	for vals := range jobs {
		if c.err == nil {
			c.err = c.writeBatch(vals)
		}
		clear(vals) // drop references to the rows' strings
		c.free <- vals[:0]
	}
	if c.err == nil {
		c.err = c.w.Flush()
	}
}

// parquetChunkRows is how many rows go to a column writer at once: it
// checks the page size between calls, so this bounds how far a page can
// grow past pageBytes.
const parquetChunkRows = 128

// writeBatch hands the values of whole rows to the column writer, which
// encodes and compresses a page whenever it has buffered pageBytes.
func (c *parquetColumn) writeBatch(vals []parquet.Value) error {
	for len(vals) > 0 {
		n := chunkLen(vals, parquetChunkRows, c.col.List)
		if _, err := c.w.WriteRowValues(vals[:n]); err != nil {
			return err
		}
		vals = vals[n:]
	}
	return nil
}

// chunkLen returns how many of vals make up their first rows rows: one
// value a row, or for a list every value up to the next one at
// repetition level 0.
func chunkLen(vals []parquet.Value, rows int, list bool) int {
	if !list {
		return min(rows, len(vals))
	}
	for i := 1; i < len(vals); i++ {
		if vals[i].RepetitionLevel() == 0 {
			if rows--; rows == 0 {
				return i
			}
		}
	}
	return len(vals)
}

// add appends one row's value: nil or of the column's Go type (checkRow
// made sure of both).
func (c *parquetColumn) add(v any) {
	if v == nil {
		c.put(parquet.Value{}, 0, 0)
		return
	}
	if !c.col.List {
		c.put(scalarValue(c.col.Type, v), 0, c.maxDef)
		return
	}
	switch c.col.Type {
	case extract.TypeString:
		addList(c, v.([]string), stringValue)
	case extract.TypeInt64:
		addList(c, v.([]int64), parquet.Int64Value)
	case extract.TypeFloat64:
		addList(c, v.([]float64), parquet.DoubleValue)
	case extract.TypeBool:
		addList(c, v.([]bool), parquet.BooleanValue)
	default:
		addList(c, v.([]time.Time), timeValue)
	}
}

// addString appends a required string.
func (c *parquetColumn) addString(s string) { c.put(stringValue(s), 0, 0) }

// addTime appends a required timestamp.
func (c *parquetColumn) addTime(t time.Time) { c.put(timeValue(t), 0, 0) }

// put appends v at the given levels. The single-field setters inline,
// unlike Value.Level.
func (c *parquetColumn) put(v parquet.Value, rep, def int) {
	v.SetRepetitionLevel(rep)
	v.SetDefinitionLevel(def)
	v.SetColumnIndex(c.index)
	c.vals = append(c.vals, v)
}

// addList appends a list's elements, the first at repetition level 0; an
// empty list is one null at the level where the list is defined but empty.
func addList[T any](c *parquetColumn, vs []T, conv func(T) parquet.Value) {
	if len(vs) == 0 {
		c.put(parquet.Value{}, 0, c.maxDef-1)
		return
	}
	for i, v := range vs {
		c.put(conv(v), min(i, 1), c.maxDef)
	}
}

// scalarValue converts a non-nil scalar of the given type.
func scalarValue(t extract.Type, v any) parquet.Value {
	switch t {
	case extract.TypeString:
		return stringValue(v.(string))
	case extract.TypeInt64:
		return parquet.Int64Value(v.(int64))
	case extract.TypeFloat64:
		return parquet.DoubleValue(v.(float64))
	case extract.TypeBool:
		return parquet.BooleanValue(v.(bool))
	default:
		return timeValue(v.(time.Time))
	}
}

// stringValue refers to the string's bytes without copying them: the
// column writer only reads them, copying them into its buffers.
func stringValue(s string) parquet.Value {
	return parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// timeValue is the timestamp in microseconds since the Unix epoch (UTC).
func timeValue(t time.Time) parquet.Value { return parquet.Int64Value(t.UnixMicro()) }
