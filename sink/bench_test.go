package sink_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/sink"
)

// benchRows is the row count of the 1M-row benchmarks.
const benchRows = 1_000_000

// benchSchema has 8 user columns (title, price, stock, upc, tags, in_stock,
// rating, updated) plus the 6 system columns: 14 columns.
var benchSchema = sink.NewSchema([]sink.Column{
	{Name: "title", Type: extract.TypeString, Required: true},
	{Name: "price", Type: extract.TypeFloat64},
	{Name: "stock", Type: extract.TypeInt64},
	{Name: "upc", Type: extract.TypeString},
	{Name: "tags", Type: extract.TypeString, List: true},
	{Name: "in_stock", Type: extract.TypeBool},
	{Name: "rating", Type: extract.TypeFloat64},
	{Name: "updated", Type: extract.TypeTimestamp},
})

// benchRing is the number of distinct rows the benchmarks cycle through:
// one default row group, so no row group holds a value twice more than
// real data would.
const benchRing = sink.DefaultRowGroupRows

// benchRows builds the distinct rows once; writing them allocates nothing
// on the caller's side, so the allocations measured are the writer's.
var benchRowsOnce = sync.OnceValue(func() []sink.Row {
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var tags [][]string
	for i := range 50 {
		tags = append(tags, []string{"sale", "new", "tag-" + fmt.Sprint(i), "eco"}[:i%4])
	}
	rows := make([]sink.Row, benchRing)
	for i := range rows {
		var rating any
		if i%7 != 0 {
			rating = float64(i%50) / 10
		}
		change := "new"
		if i%4 == 0 {
			change = "changed"
		}
		key := fmt.Sprintf("https://shop.example/p/%07d", i)
		rows[i] = sink.Row{
			Key: key, URL: key, Change: change, RunID: "20260501T000000Z-abcdef",
			Hash:      fmt.Sprintf("%016x%016x%016x%016x", uint64(i)*0x9E3779B97F4A7C15, uint64(i)^0xDEADBEEF, uint64(i)*31, uint64(i)),
			FetchedAt: base.Add(time.Duration(i) * time.Millisecond),
			Values: []any{
				fmt.Sprintf("Product %d – Größe %d, Farbe №%d", i%1000, i%50, i%13),
				float64(i%10000) / 100,
				int64(i % 500),
				fmt.Sprintf("%012d", uint64(i)*7919%1_000_000_000_000),
				tags[i%len(tags)],
				i%3 != 0,
				rating,
				base.Add(time.Duration(i%86400) * time.Second),
			},
		}
	}
	return rows
})

// BenchmarkParquetWrite1M writes 1,000,000 rows of benchSchema per
// iteration and reports rows/s, allocations per row, the peak heap in use
// above the pre-generated data, and the bytes written.
func BenchmarkParquetWrite1M(b *testing.B) { benchWrite1M(b, sink.FormatParquet) }

// BenchmarkArrowWrite1M is BenchmarkParquetWrite1M for Arrow IPC streams.
func BenchmarkArrowWrite1M(b *testing.B) { benchWrite1M(b, sink.FormatArrow) }

func benchWrite1M(b *testing.B, format sink.Format) {
	ring := benchRowsOnce()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stop, peak := sampleHeap()
	var bytes int64
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for n := range b.N {
		w, err := sink.NewFileSet(filepath.Join(b.TempDir(), fmt.Sprint(n)), benchSchema, sink.Options{Format: format})
		if err != nil {
			b.Fatal(err)
		}
		for i := range benchRows {
			if err := w.Write(ring[i%benchRing]); err != nil {
				b.Fatal(err)
			}
		}
		infos, err := w.Close()
		if err != nil {
			b.Fatal(err)
		}
		bytes = 0
		for _, f := range infos {
			bytes += f.Bytes
		}
	}
	b.StopTimer()
	cpu = cpuTime() - cpu
	stop()
	runtime.ReadMemStats(&after)
	rows := float64(b.N) * benchRows
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/rows, "cpu-ns/row")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/rows, "allocs/row")
	b.ReportMetric(float64(*peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(*peak-min(*peak, before.HeapInuse))/(1<<20), "heap-above-data-MiB")
	b.ReportMetric(float64(bytes)/(1<<20), "file-MiB")
}

// sampleHeap records the peak heap in use (HeapInuse: objects and the
// unused part of their spans) every 5 ms until stop is called. It reads
// runtime/metrics, which, unlike runtime.ReadMemStats, does not stop the
// world.
func sampleHeap() (stop func(), peak *uint64) {
	peak = new(uint64)
	done := make(chan struct{})
	exited := make(chan struct{})
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	go func() {
		defer close(exited)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(samples)
			*peak = max(*peak, samples[0].Value.Uint64()+samples[1].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-exited }, peak
}
