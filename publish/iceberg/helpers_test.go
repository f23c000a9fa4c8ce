package iceberg

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/sink"
)

// userColumns covers every column type the stage writes, a list included.
var userColumns = []sink.Column{
	{Name: "title", Type: extract.TypeString, Required: true},
	{Name: "price", Type: extract.TypeFloat64},
	{Name: "pages", Type: extract.TypeInt64},
	{Name: "in_stock", Type: extract.TypeBool},
	{Name: "published", Type: extract.TypeTimestamp},
	{Name: "tags", Type: extract.TypeString, List: true},
}

var day1 = time.Date(2026, 3, 1, 10, 30, 0, 123456000, time.UTC)

// makeRows returns n rows of run runID with keys prefix-0, prefix-1, ...:
// every third row has NULLs, lists vary in length (an empty one included)
// and the rows span two days of _seen_at.
func makeRows(runID, prefix string, n int, extra ...any) []sink.Row {
	rows := make([]sink.Row, n)
	for i := range rows {
		r := sink.Row{
			Key:       fmt.Sprintf("%s-%d", prefix, i),
			URL:       fmt.Sprintf("https://shop.test/%s/%d", prefix, i),
			Change:    "new",
			RunID:     runID,
			Hash:      "h",
			FetchedAt: day1.Add(time.Duration(i%12) * 3 * time.Hour),
			Values: []any{
				fmt.Sprintf("Book %d", i),
				float64(i) + 0.5,
				int64(100 + i),
				i%2 == 0,
				day1.Add(-time.Duration(i) * 24 * time.Hour),
				[]string{"a", fmt.Sprint(i)}[:i%3],
			},
		}
		if i == 0 {
			r.Values[5] = []string(nil) // an empty list, not NULL
		}
		if i%3 == 1 {
			r.Values[1], r.Values[2], r.Values[3], r.Values[4], r.Values[5] = nil, nil, nil, nil, nil
		}
		r.Values = append(r.Values, extra...)
		rows[i] = r
	}
	return rows
}

func yieldAll(rows []sink.Row) func(yield func(sink.Row) error) error {
	return func(yield func(sink.Row) error) error {
		for _, r := range rows {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// arrowValue returns value i of a as the tests compare it: nil for NULL,
// []any for a list, time.Time in UTC for a timestamp.
func arrowValue(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Timestamp:
		return a.Value(i).ToTime(a.DataType().(*arrow.TimestampType).Unit).UTC()
	case *array.List:
		start, end := a.ValueOffsets(i)
		out := []any{}
		for j := start; j < end; j++ {
			out = append(out, arrowValue(a.ListValues(), int(j)))
		}
		return out
	}
	panic(fmt.Sprintf("unexpected arrow type %s", a.DataType()))
}
