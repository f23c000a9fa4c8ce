package sink

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/databrew/databrew-stage/extract"
)

// TestArrowReleasesMemory writes, closes and aborts Arrow file sets with a
// checked allocator: every builder, array and record must be released.
func TestArrowReleasesMemory(t *testing.T) {
	s := NewSchema([]Column{
		{Name: "title", Type: extract.TypeString},
		{Name: "n", Type: extract.TypeInt64, List: true},
		{Name: "when", Type: extract.TypeTimestamp, List: true},
	})
	row := func(i int) Row {
		return Row{Key: fmt.Sprint(i), Change: "new", FetchedAt: time.Unix(int64(i), 0),
			Values: []any{fmt.Sprint("t", i), []int64{int64(i)}, []time.Time{time.Unix(0, 0)}}}
	}
	for _, abort := range []bool{false, true} {
		t.Run(fmt.Sprint("abort=", abort), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			opts := Options{Format: FormatArrow, RowGroupRows: 4, MaxFileRows: 10}
			opts.alloc = mem
			w, err := NewFileSet(t.TempDir(), s, opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 25 {
				if err := w.Write(row(i)); err != nil {
					t.Fatal(err)
				}
			}
			if abort {
				err = w.Abort()
			} else {
				_, err = w.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
			mem.AssertSize(t, 0)
		})
	}
}
