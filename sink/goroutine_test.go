package sink_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/sink"
	"go.uber.org/goleak"
)

// TestNoGoroutineOutlivesTheFileSet stops file sets in the middle of a
// row group, by Close and by Abort: no goroutine may be left behind.
func TestNoGoroutineOutlivesTheFileSet(t *testing.T) {
	s := sink.NewSchema([]sink.Column{{Name: "n", Type: extract.TypeInt64}})
	for _, format := range []sink.Format{sink.FormatParquet, sink.FormatArrow} {
		for _, abort := range []bool{false, true} {
			t.Run(fmt.Sprint(format, " abort=", abort), func(t *testing.T) {
				defer goleak.VerifyNone(t)
				w, err := sink.NewFileSet(t.TempDir(), s, sink.Options{Format: format, RowGroupRows: 5000})
				if err != nil {
					t.Fatal(err)
				}
				for i := range 3000 {
					if err := w.Write(sink.Row{Key: fmt.Sprint(i), Change: "new", FetchedAt: time.Unix(0, 0), Values: []any{int64(i)}}); err != nil {
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
			})
		}
	}
}
