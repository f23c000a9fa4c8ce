package sink

import (
	"fmt"
	"io"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// parquetBatchRows is how many rows are built before their values are
// handed to the column goroutines.
const parquetBatchRows = 1024

// pageBytes is how much a column buffers before it encodes and compresses
// a page. Every column holds a page's buffer while its row group is open,
// so this sets the export's memory; on catalog data 256 KiB pages compress
// as well as 1 MiB ones.
const pageBytes = 256 << 10

// parquetQueueDepth is how many built batches a column may have waiting;
// the caller blocks when a column falls this far behind.
const parquetQueueDepth = 4

// parquetEncoder writes rows column by column. The caller's goroutine
// builds each column's values, with their repetition and definition
// levels, a batch of rows at a time; during a row group every column has
// a goroutine that encodes and compresses its batches in order, so the
// columns proceed independently and only meet when the row group ends
// every RowGroupRows rows. Pages are zstd-compressed, pageBytes before
// compression.
type parquetEncoder struct {
	w        *parquet.GenericWriter[any]
	cols     []parquetColumn
	batch    int // rows per batch
	groupMax int // rows per row group
	n        int // rows built in the batch
	inGroup  int // rows handed to the columns in this row group
	running  bool
	exited   sync.WaitGroup
}

// newParquetEncoder starts a Parquet file on w.
func newParquetEncoder(w io.Writer, s Schema, opts Options) (encoder, error) {
	schema := parquetSchema(s)
	options := []parquet.WriterOption{
		schema,
		parquet.Compression(pageZstd),
		parquet.PageBufferSize(pageBytes),
	}
	for k, v := range opts.Metadata {
		options = append(options, parquet.KeyValueMetadata(k, v))
	}
	pw := parquet.NewGenericWriter[any](w, options...)
	e := &parquetEncoder{
		w:        pw,
		cols:     make([]parquetColumn, len(s.Fields)),
		batch:    min(parquetBatchRows, opts.RowGroupRows),
		groupMax: opts.RowGroupRows,
	}
	writers := pw.ColumnWriters()
	for i := range s.Fields {
		c := &s.Fields[i]
		path := []string{c.Name}
		if c.List {
			path = append(path, "list", "element")
		}
		leaf, ok := schema.Lookup(path...)
		if !ok || leaf.ColumnIndex != i || len(writers) != len(s.Fields) {
			return nil, fmt.Errorf("parquet schema: column %q is not leaf %d", c.Name, i)
		}
		e.cols[i] = newParquetColumn(c, writers[i], i, leaf.MaxDefinitionLevel)
	}
	return e, nil
}

// write builds r into the batch and hands the batch over when it is full
// or completes a row group.
func (e *parquetEncoder) write(r Row) error {
	nu := len(r.Values)
	for i, v := range r.Values {
		e.cols[i].add(v)
	}
	e.cols[nu].addString(r.Key)
	e.cols[nu+1].addString(r.URL)
	e.cols[nu+2].addString(r.Change)
	e.cols[nu+3].addTime(r.FetchedAt)
	e.cols[nu+4].addString(r.RunID)
	e.cols[nu+5].addString(r.Hash)
	e.n++
	if e.n == e.batch || e.inGroup+e.n == e.groupMax {
		return e.handOver()
	}
	return nil
}

// handOver queues the built batch on every column, and ends the row group
// when it is full.
func (e *parquetEncoder) handOver() error {
	if e.n == 0 {
		return nil
	}
	if !e.running {
		e.running = true
		for i := range e.cols {
			c := &e.cols[i]
			jobs := make(chan []parquet.Value, parquetQueueDepth)
			c.jobs = jobs
			e.exited.Add(1)
			go func() {
				defer e.exited.Done()
				c.run(jobs)
			}()
		}
	}
	for i := range e.cols {
		e.cols[i].send()
	}
	e.inGroup += e.n
	e.n = 0
	if e.inGroup < e.groupMax {
		return nil
	}
	e.inGroup = 0
	return e.endRowGroup()
}

// endRowGroup lets every column finish its batches and compress its last
// page, in parallel, then writes the row group to the file.
func (e *parquetEncoder) endRowGroup() error {
	if err := e.stopColumns(); err != nil {
		return err
	}
	return e.w.Flush()
}

// stopColumns closes the column queues, waits for the column goroutines
// and returns the first column error.
func (e *parquetEncoder) stopColumns() error {
	if !e.running {
		return nil
	}
	for i := range e.cols {
		close(e.cols[i].jobs)
	}
	e.exited.Wait()
	e.running = false
	for i := range e.cols {
		if err := e.cols[i].err; err != nil {
			return fmt.Errorf("column %q: %w", e.cols[i].col.Name, err)
		}
	}
	return nil
}

// close writes the last rows and the footer.
func (e *parquetEncoder) close() error {
	if err := e.handOver(); err != nil {
		return err
	}
	if err := e.endRowGroup(); err != nil {
		return err
	}
	return e.w.Close()
}

// abandon stops the column goroutines and drops the buffered values.
func (e *parquetEncoder) abandon() {
	_ = e.stopColumns()
	for i := range e.cols {
		e.cols[i].vals = nil
	}
}
