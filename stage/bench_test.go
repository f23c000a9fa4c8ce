package stage

import (
	"context"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// BenchmarkCrawl crawls a 2,000-item catalog on loopback per iteration at
// concurrency 16, storing every item; pages/s is reported. The server runs
// in the same process, so it shares the CPU. `make bench` compares the
// binary with another crawler.
func BenchmarkCrawl(b *testing.B) {
	const items = 2000
	var pages int
	for b.Loop() {
		b.StopTimer()
		f := newFixture(b, catalogsite.Options{Items: items})
		cfg := f.config(map[string]string{"concurrency": "16"}, "")
		b.StartTimer()
		rep, err := Run(context.Background(), cfg, Options{})
		if err != nil || rep.Items.New != items {
			b.Fatalf("run: %v %s", err, rep.Summary())
		}
		pages += rep.Requests.Total
	}
	b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
}
