package sinktest

import (
	"context"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ReadParquet reads a Parquet file with arrow-go, an implementation
// independent of the writer, and checks that every column chunk is
// zstd-compressed.
func ReadParquet(t testing.TB, path string) ReadBack {
	t.Helper()
	// Not a checked allocator: arrow-go's DELTA_LENGTH_BYTE_ARRAY decoder
	// never frees a 64-byte block per page it decodes.
	mem := memory.NewGoAllocator()
	rdr, err := file.OpenParquetFile(path, false, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer rdr.Close()
	md := rdr.MetaData()
	var rb ReadBack
	rb.Metadata = map[string]string{}
	for _, kv := range md.KeyValueMetadata() {
		rb.Metadata[kv.Key] = *kv.Value
	}
	for i := range md.NumRowGroups() {
		rg := md.RowGroup(i)
		rb.Groups = append(rb.Groups, rg.NumRows())
		for j := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				t.Fatal(err)
			}
			if cc.Compression() != compress.Codecs.Zstd {
				t.Errorf("%s: row group %d column %s is %s-compressed, want zstd", path, i, cc.PathInSchema(), cc.Compression())
			}
		}
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1000}, mem)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fr.Schema()
	if err != nil {
		t.Fatal(err)
	}
	rb.Columns = ColumnsOf(s)
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	for rr.Next() {
		if rb.Rows, err = AppendRecord(rb.Rows, rr.RecordBatch()); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rb
}

// ReadArrow reads an Arrow IPC stream file with ipc.NewReader.
func ReadArrow(t testing.TB, path string) ReadBack {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewReader(f, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer r.Release()
	var rb ReadBack
	rb.Columns = ColumnsOf(r.Schema())
	md := r.Schema().Metadata()
	rb.Metadata = map[string]string{}
	for i, k := range md.Keys() {
		rb.Metadata[k] = md.Values()[i]
	}
	for r.Next() {
		rec := r.RecordBatch()
		rb.Groups = append(rb.Groups, rec.NumRows())
		if rb.Rows, err = AppendRecord(rb.Rows, rec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rb
}
