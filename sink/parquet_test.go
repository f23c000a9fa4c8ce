package sink_test

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/sink/sinktest"
)

func TestParquet(t *testing.T) {
	sinktest.Run(t, sink.FormatParquet, sinktest.ReadParquet)
}

// TestParquetLayout checks the Parquet schema itself: physical and
// logical types, the three-level lists, levels, and the dictionary
// encoding of _change and _run_id.
func TestParquetLayout(t *testing.T) {
	dir := t.TempDir()
	s := sink.NewSchema([]sink.Column{
		{Name: "z_tags", Type: extract.TypeString, List: true},
		{Name: "a_when", Type: extract.TypeTimestamp, Required: true},
		{Name: "m_n", Type: extract.TypeInt64, List: true, Required: true},
	})
	w, err := sink.NewFileSet(dir, s, sink.Options{Format: sink.FormatParquet})
	if err != nil {
		t.Fatal(err)
	}
	row := sink.Row{Key: "k", URL: "u", Change: "new", RunID: "r", Hash: "h",
		Values: []any{[]string{"a"}, time.Unix(1, 0), []int64{1, 2}}}
	for range 50 {
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := file.OpenParquetFile(filepath.Join(dir, infos[0].Name), false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	sc := rdr.MetaData().Schema
	type leaf struct {
		path           string
		physical       parquet.Type
		logical        string
		maxDef, maxRep int16
	}
	want := []leaf{
		{"z_tags.list.element", parquet.Types.ByteArray, "String", 2, 1},
		{"a_when", parquet.Types.Int64, "Timestamp(isAdjustedToUTC=true, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)", 0, 0},
		{"m_n.list.element", parquet.Types.Int64, "Int(bitWidth=64, isSigned=true)", 1, 1},
		{"_key", parquet.Types.ByteArray, "String", 0, 0},
		{"_url", parquet.Types.ByteArray, "String", 0, 0},
		{"_change", parquet.Types.ByteArray, "String", 0, 0},
		{"_fetched_at", parquet.Types.Int64, "Timestamp(isAdjustedToUTC=true, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)", 0, 0},
		{"_run_id", parquet.Types.ByteArray, "String", 0, 0},
		{"_hash", parquet.Types.ByteArray, "String", 0, 0},
	}
	if sc.NumColumns() != len(want) {
		t.Fatalf("%d leaf columns, want %d", sc.NumColumns(), len(want))
	}
	for i, w := range want {
		c := sc.Column(i)
		got := leaf{c.ColumnPath().String(), c.PhysicalType(), c.LogicalType().String(), c.MaxDefinitionLevel(), c.MaxRepetitionLevel()}
		if got != w {
			t.Errorf("leaf %d = %+v, want %+v", i, got, w)
		}
	}
	for _, i := range []int{0, 2} {
		n, ok := sc.Root().Field(i).(*schema.GroupNode)
		if !ok || n.LogicalType().String() != "List" || n.NumFields() != 1 || n.Field(0).Name() != "list" ||
			n.Field(0).RepetitionType() != parquet.Repetitions.Repeated {
			t.Errorf("root field %d is %v, want a LIST of a repeated group named list", i, sc.Root().Field(i))
		}
	}
	rg := rdr.MetaData().RowGroup(0)
	dict := map[string]bool{}
	for j := range rg.NumColumns() {
		cc, err := rg.ColumnChunk(j)
		if err != nil {
			t.Fatal(err)
		}
		dict[cc.PathInSchema().String()] = cc.HasDictionaryPage()
	}
	for _, name := range []string{"_change", "_run_id"} {
		if !dict[name] {
			t.Errorf("%s has no dictionary page: %v", name, dict)
		}
	}
}

// TestParquetPagesHoldWholeRows writes a list column large enough for
// many pages and checks that every page holds whole rows: the pages' row
// counts add up to the row group's, and the values read back intact.
func TestParquetPagesHoldWholeRows(t *testing.T) {
	dir := t.TempDir()
	s := sink.NewSchema([]sink.Column{{Name: "blobs", Type: extract.TypeString, List: true, Required: true}})
	w, err := sink.NewFileSet(dir, s, sink.Options{Format: sink.FormatParquet, RowGroupRows: 5000})
	if err != nil {
		t.Fatal(err)
	}
	var rows []sink.Row
	for i := range 3000 {
		blobs := make([]string, i%5)
		for j := range blobs {
			blobs[j] = strings.Repeat(string(rune('a'+j)), 500+i%700)
		}
		r := sink.Row{Key: fmt.Sprint(i), Change: "new", Values: []any{blobs}}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	infos, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, infos[0].Name)
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	pr, err := rdr.RowGroup(0).GetColumnPageReader(0)
	if err != nil {
		t.Fatal(err)
	}
	var pages, pageRows int64
	for pr.Next() {
		if p, ok := pr.Page().(*file.DataPageV2); ok {
			pages++
			pageRows += int64(p.NumRows())
			if rep := firstRepetitionLevel(t, p); rep != 0 {
				t.Errorf("page %d starts inside a row (repetition level %d)", pages, rep)
			}
		}
	}
	if err := pr.Err(); err != nil {
		t.Fatal(err)
	}
	if pages < 3 || pageRows != 3000 {
		t.Errorf("%d data pages holding %d rows, want several pages holding 3000", pages, pageRows)
	}
	got := sinktest.ReadParquet(t, path)
	for i, r := range rows {
		if want := r.Values[0].([]string); !slices.Equal(got.Rows[i][0].([]string), want) {
			t.Fatalf("row %d: blobs differ", i)
		}
	}
}

// firstRepetitionLevel decodes the first repetition level of a page whose
// levels are 1 bit wide: the RLE/bit-packed hybrid run header, a uvarint,
// is followed by a byte whose low bit is the first level either way.
func firstRepetitionLevel(t *testing.T, p *file.DataPageV2) int {
	t.Helper()
	data := p.Data()[:p.RepetitionLevelByteLen()]
	_, n := binary.Uvarint(data)
	if n <= 0 || n >= len(data) {
		t.Fatalf("bad repetition levels %x", data)
	}
	return int(data[n] & 1)
}
