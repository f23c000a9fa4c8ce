package sinktest

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/sink"
)

// userColumns covers every type, scalar and list, optional and required,
// in an order that is not alphabetical, with a non-ASCII name.
var userColumns = []sink.Column{
	{Name: "title", Type: extract.TypeString},
	{Name: "sku", Type: extract.TypeString, Required: true},
	{Name: "price", Type: extract.TypeFloat64},
	{Name: "stock", Type: extract.TypeInt64, Required: true},
	{Name: "in_stock", Type: extract.TypeBool},
	{Name: "updated", Type: extract.TypeTimestamp},
	{Name: "größe", Type: extract.TypeInt64},
	{Name: "tags", Type: extract.TypeString, List: true},
	{Name: "sizes", Type: extract.TypeInt64, List: true, Required: true},
	{Name: "weights", Type: extract.TypeFloat64, List: true},
	{Name: "flags", Type: extract.TypeBool, List: true},
	{Name: "seen", Type: extract.TypeTimestamp, List: true, Required: true},
	{Name: "alpha", Type: extract.TypeBool, Required: true},
}

// testSchema is the schema of userColumns.
func testSchema() sink.Schema { return sink.NewSchema(userColumns) }

var (
	paris   = time.FixedZone("CEST", 2*3600)
	fetched = time.Date(2026, 5, 17, 10, 30, 0, 123456789, paris)
)

// typeRows are rows with every kind of value: NULLs, empty and null
// lists, non-ASCII and empty strings, extreme numbers, timestamps before
// the epoch, in other zones and with nanoseconds.
func typeRows() []sink.Row {
	return []sink.Row{
		{
			Key: "k/0", URL: "https://shop.example/p/0", Change: "new", RunID: "run-1", Hash: "h0", FetchedAt: fetched,
			Values: []any{"Grüße, 世界 🚀", "SKU-0", 19.99, int64(7), true,
				time.Date(2026, 1, 2, 3, 4, 5, 678901234, paris), int64(42),
				[]string{"neu", "日本語", ""}, []int64{1, 2, 3}, []float64{0.5, -1.25}, []bool{true, false, true},
				[]time.Time{time.Date(2025, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 1000, paris)},
				false},
		},
		{
			Key: "k/1", URL: "https://shop.example/p/1", Change: "changed", RunID: "run-1", Hash: "h1", FetchedAt: fetched.Add(time.Second),
			Values: []any{nil, "", nil, int64(0), nil, nil, nil,
				nil, []int64{}, nil, nil, []time.Time(nil), true},
		},
		{
			Key: "k/2", URL: "https://shop.example/p/2?q=ü", Change: "removed", RunID: "run-1", Hash: "", FetchedAt: time.Unix(0, 0),
			Values: []any{"", "nul\x00byte", math.Inf(1), int64(math.MaxInt64), false,
				time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC), int64(math.MinInt64),
				[]string{}, []int64{1<<53 + 1, -(1<<53 + 1)}, []float64{}, []bool{}, []time.Time{time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)},
				false},
		},
		{
			Key: "k/3", URL: "", Change: "new", RunID: "run-1", Hash: "h3", FetchedAt: time.Date(1900, 1, 1, 0, 0, 0, 1, time.UTC),
			Values: []any{strings.Repeat("ab", 5000), "SKU-3", math.SmallestNonzeroFloat64, int64(-1), true,
				time.Unix(1, 500), int64(1<<53 + 1),
				[]string{"x"}, []int64{math.MinInt64}, []float64{math.MaxFloat64, math.Inf(-1), math.Copysign(0, -1)}, []bool{false}, []time.Time{},
				true},
		},
	}
}

// seqRow is row i of a generated sequence; its key orders it.
func seqRow(i int) sink.Row {
	var title any
	if i%3 != 0 {
		title = fmt.Sprintf("item %d – %s", i, strings.Repeat("é", i%40))
	}
	tags := make([]string, i%4)
	for j := range tags {
		tags[j] = fmt.Sprintf("tag-%d-%d", i, j)
	}
	var weights any
	if i%5 != 0 {
		weights = []float64{float64(i) / 8}
	}
	return sink.Row{
		Key: fmt.Sprintf("k/%06d", i), URL: fmt.Sprintf("https://shop.example/p/%d", i), Change: "new",
		RunID: "run-seq", Hash: fmt.Sprintf("%064x", i), FetchedAt: fetched.Add(time.Duration(i) * time.Microsecond),
		Values: []any{title, fmt.Sprintf("SKU-%d", i), float64(i) / 100, int64(i), i%2 == 0,
			fetched.Add(time.Duration(i) * time.Hour), nil,
			tags, []int64{int64(i)}, weights, []bool{i%2 == 1}, []time.Time{fetched},
			i%7 == 0},
	}
}

// seqRows returns rows [from, to) of the sequence.
func seqRows(from, to int) []sink.Row {
	rows := make([]sink.Row, 0, to-from)
	for i := from; i < to; i++ {
		rows = append(rows, seqRow(i))
	}
	return rows
}
