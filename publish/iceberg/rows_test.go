package iceberg

import (
	"errors"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/databrew/databrew-stage/sink"
)

func testConverter(t *testing.T) *converter {
	t.Helper()
	sc, _, err := newSchema(userColumns)
	if err != nil {
		t.Fatal(err)
	}
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := newConverter(asc, userColumns)
	if err != nil {
		t.Fatal(err)
	}
	return cv
}

// TestBatchesBounded checks that rows become batches of at most batchRows
// rows, all of them in order.
func TestBatchesBounded(t *testing.T) {
	cv := testConverter(t)
	rows := makeRows("run-1", "k", 2*batchRows+5)
	var sizes []int64
	next := 0
	for rec, err := range cv.batches(yieldAll(rows)) {
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, rec.NumRows())
		keys := rec.Column(rec.Schema().FieldIndices(ColumnKey)[0])
		for i := 0; i < int(rec.NumRows()); i++ {
			if got := arrowValue(keys, i); got != rows[next].Key {
				t.Fatalf("row %d has key %v, want %s", next, got, rows[next].Key)
			}
			next++
		}
		rec.Release()
	}
	if want := []int64{batchRows, batchRows, 5}; !slices.Equal(sizes, want) {
		t.Errorf("batch sizes %v, want %v", sizes, want)
	}
}

// TestBatchesStop checks that a consumer that stops reading stops rows,
// and that an error of rows reaches the consumer.
func TestBatchesStop(t *testing.T) {
	cv := testConverter(t)
	var rowsErr error
	rows := func(yield func(sink.Row) error) error {
		for _, r := range makeRows("run-1", "k", 3*batchRows) {
			if err := yield(r); err != nil {
				rowsErr = err
				return err
			}
		}
		return nil
	}
	n := 0
	for rec, err := range cv.batches(rows) {
		if err != nil {
			t.Fatal(err)
		}
		rec.Release()
		n++
		break
	}
	if n != 1 || !errors.Is(rowsErr, errStopped) {
		t.Errorf("read %d batches, rows got %v; want 1 and errStopped", n, rowsErr)
	}

	boom := errors.New("boom")
	var got error
	for rec, err := range cv.batches(func(yield func(sink.Row) error) error { return boom }) {
		if rec != nil {
			rec.Release()
		}
		got = err
	}
	if got != boom {
		t.Errorf("batches of a failing rows gave %v, want boom", got)
	}
}
