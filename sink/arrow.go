package sink

import (
	"bufio"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/databrew/databrew-stage/extract"
)

// arrowBufferSize is the write buffer in front of the file: the IPC
// writer issues many small writes per record batch.
const arrowBufferSize = 256 << 10

// arrowEncoder writes rows as an Arrow IPC stream, one zstd-compressed
// record batch per RowGroupRows rows.
type arrowEncoder struct {
	buf      *bufio.Writer
	w        *ipc.Writer
	b        *array.RecordBuilder
	user     []func(v any) // appends a value to each user column
	key, url *array.StringBuilder
	change   *array.StringBuilder
	fetched  *array.TimestampBuilder
	runID    *array.StringBuilder
	hash     *array.StringBuilder
	n, max   int // rows in the batch being built, rows per batch
	sized    []sizedBuilder
}

// sizedBuilder remembers how much a builder held in the last batch, so
// the next batch can reserve it at once instead of growing step by step.
type sizedBuilder struct {
	b         array.Builder
	len, data int
}

// newArrowEncoder starts an Arrow IPC stream on w.
func newArrowEncoder(w io.Writer, s Schema, opts Options) (encoder, error) {
	mem := opts.alloc
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	schema := arrowSchema(s, opts.Metadata)
	buf := bufio.NewWriterSize(w, arrowBufferSize)
	e := &arrowEncoder{
		buf: buf,
		w:   ipc.NewWriter(buf, ipc.WithSchema(schema), ipc.WithZstd(), ipc.WithAllocator(mem)),
		b:   array.NewRecordBuilder(mem, schema),
		max: opts.RowGroupRows,
	}
	nu := len(s.User())
	for i := range nu {
		e.user = append(e.user, arrowAppender(&s.Fields[i], e.b.Field(i)))
	}
	e.key = e.b.Field(nu).(*array.StringBuilder)
	e.url = e.b.Field(nu + 1).(*array.StringBuilder)
	e.change = e.b.Field(nu + 2).(*array.StringBuilder)
	e.fetched = e.b.Field(nu + 3).(*array.TimestampBuilder)
	e.runID = e.b.Field(nu + 4).(*array.StringBuilder)
	e.hash = e.b.Field(nu + 5).(*array.StringBuilder)
	for _, b := range e.b.Fields() {
		e.sized = append(e.sized, sizedBuilder{b: b})
		if lb, ok := b.(*array.ListBuilder); ok {
			e.sized = append(e.sized, sizedBuilder{b: lb.ValueBuilder()})
		}
	}
	return e, nil
}

// write appends r to the batch and writes the batch when it is full.
func (e *arrowEncoder) write(r Row) error {
	for i, v := range r.Values {
		e.user[i](v)
	}
	e.key.Append(r.Key)
	e.url.Append(r.URL)
	e.change.Append(r.Change)
	e.fetched.Append(arrow.Timestamp(r.FetchedAt.UnixMicro()))
	e.runID.Append(r.RunID)
	e.hash.Append(r.Hash)
	e.n++
	if e.n == e.max {
		return e.flushBatch()
	}
	return nil
}

// flushBatch writes the rows built so far as one record batch.
func (e *arrowEncoder) flushBatch() error {
	if e.n == 0 {
		return nil
	}
	for i := range e.sized {
		e.sized[i].measure()
	}
	rec := e.b.NewRecordBatch()
	defer rec.Release()
	for i := range e.sized {
		e.sized[i].reserve()
	}
	e.n = 0
	return e.w.Write(rec)
}

// measure records the builder's current length and data size.
func (s *sizedBuilder) measure() {
	s.len = s.b.Len()
	if sb, ok := s.b.(*array.StringBuilder); ok {
		s.data = sb.DataLen()
	}
}

// reserve makes room for as much as the builder held when measured.
func (s *sizedBuilder) reserve() {
	s.b.Reserve(s.len)
	if sb, ok := s.b.(*array.StringBuilder); ok {
		sb.ReserveData(s.data)
	}
}

// close writes the last batch and the end-of-stream marker.
func (e *arrowEncoder) close() error {
	defer e.b.Release()
	if err := e.flushBatch(); err != nil {
		e.w.Close()
		return err
	}
	if err := e.w.Close(); err != nil {
		return err
	}
	return e.buf.Flush()
}

// abandon releases the builders and the writer's buffers.
func (e *arrowEncoder) abandon() {
	e.b.Release()
	e.w.Close()
}

// arrowAppender returns a function appending one value of column c, nil or
// of the column's Go type (checkRow made sure of it), to b.
func arrowAppender(c *Column, b array.Builder) func(v any) {
	if c.List {
		lb := b.(*array.ListBuilder)
		eb := lb.ValueBuilder()
		switch c.Type {
		case extract.TypeString:
			return listAppender(lb, eb.(*array.StringBuilder).Append)
		case extract.TypeInt64:
			return listAppender(lb, eb.(*array.Int64Builder).Append)
		case extract.TypeFloat64:
			return listAppender(lb, eb.(*array.Float64Builder).Append)
		case extract.TypeBool:
			return listAppender(lb, eb.(*array.BooleanBuilder).Append)
		default:
			return listAppender(lb, timeAppend(eb.(*array.TimestampBuilder)))
		}
	}
	switch c.Type {
	case extract.TypeString:
		return scalarAppender(b, b.(*array.StringBuilder).Append)
	case extract.TypeInt64:
		return scalarAppender(b, b.(*array.Int64Builder).Append)
	case extract.TypeFloat64:
		return scalarAppender(b, b.(*array.Float64Builder).Append)
	case extract.TypeBool:
		return scalarAppender(b, b.(*array.BooleanBuilder).Append)
	default:
		return scalarAppender(b, timeAppend(b.(*array.TimestampBuilder)))
	}
}

// scalarAppender appends a T or, for nil, a null.
func scalarAppender[T any](b array.Builder, add func(T)) func(v any) {
	return func(v any) {
		if v == nil {
			b.AppendNull()
			return
		}
		add(v.(T))
	}
}

// listAppender appends a []T as one list or, for nil, a null list.
func listAppender[T any](lb *array.ListBuilder, add func(T)) func(v any) {
	return func(v any) {
		if v == nil {
			lb.AppendNull()
			return
		}
		lb.Append(true)
		for _, x := range v.([]T) {
			add(x)
		}
	}
}

// timeAppend appends a time as microseconds since the Unix epoch (UTC).
func timeAppend(b *array.TimestampBuilder) func(time.Time) {
	return func(t time.Time) { b.Append(arrow.Timestamp(t.UnixMicro())) }
}
