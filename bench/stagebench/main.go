// Command stagebench is the databrew-stage side of the benchmark. It runs
// one crawl of a catalog site through the Go API (stage.Run) with a config
// equivalent to the benchmark's Colly crawler: the SPEC example's listing
// and item selectors, key "upc", the six fields title, price, stock, upc,
// tags and image; concurrency from -concurrency, no delay, robots.txt
// respected, 2 retries, min_body_bytes 512. State and export go to a fresh
// folder under -dir, as in a real first run: every item is hashed, written
// to the bbolt store and, after the crawl, exported. -write-budget sets
// the state's write budget (state/writebudget.go), off to compare a crawl
// whose commits are single transactions however large.
//
// It prints one JSON line to stdout:
//
//	{"pages": N, "items": N, "seconds": S, "run_seconds": R, "mallocs": M, "total_alloc_bytes": B, "heap_peak_bytes": H, ...}
//
// where pages is the report's request total (robots.txt not counted),
// items is new + changed + unchanged, seconds is the crawl (the report's
// started_at to finished_at, which is comparable to the Colly crawler's
// seconds), run_seconds is the whole stage.Run call including the export,
// mallocs and total_alloc_bytes are runtime.MemStats deltas around
// stage.Run, and heap_peak_bytes is the largest Go heap seen while it ran.
// Peak RSS is measured from outside by the benchmark driver.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/databrew/databrew-stage/bench/benchconfig"
	"github.com/databrew/databrew-stage/internal/exeadvice"
	"github.com/databrew/databrew-stage/internal/gctune"
	"github.com/databrew/databrew-stage/stage"
)

// result is the JSON line the command prints.
type result struct {
	Pages           int     `json:"pages"`
	Items           int     `json:"items"`
	Failed          int     `json:"errors"`
	Outcome         string  `json:"outcome"`
	Seconds         float64 `json:"seconds"`
	RunSeconds      float64 `json:"run_seconds"`
	Exported        int     `json:"exported_rows"`
	Mallocs         uint64  `json:"mallocs"`
	TotalAllocBytes uint64  `json:"total_alloc_bytes"`
	HeapPeakBytes   uint64  `json:"heap_peak_bytes"`
}

func main() {
	gctune.Apply() // as the databrew-stage binary does
	_ = exeadvice.Apply()
	os.Exit(run())
}

// run parses the flags, runs the crawl and returns the exit code.
func run() int {
	start := flag.String("url", "", "start URL (a listing page)")
	concurrency := flag.Int("concurrency", 16, "parallel requests to the site")
	dir := flag.String("dir", "", "folder for the run's state (default: a new temporary folder, removed afterwards)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	memprofile := flag.String("memprofile", "", "write a heap profile taken near the run's heap peak to this file")
	budget := flag.String("write-budget", "", "the state's write budget in bytes (stage.Options.WriteBudget); "+
		"empty: the default; off: never split a commit (a budget of math.MaxInt64/4, never reached)")
	flag.Parse()
	if *start == "" {
		return fail(2, "-url is required")
	}
	writeBudget, err := parseBudget(*budget)
	if err != nil {
		return fail(2, err.Error())
	}
	root := *dir
	if root == "" {
		tmp, err := os.MkdirTemp("", "stagebench-")
		if err != nil {
			return fail(1, err.Error())
		}
		defer os.RemoveAll(tmp)
		root = tmp
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return fail(1, err.Error())
	}
	cfg, err := benchconfig.Parse(*start, root, *concurrency, "")
	if err != nil {
		return fail(2, err.Error())
	}

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return fail(1, err.Error())
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(1, err.Error())
		}
	}
	stage.AdviseHeap(cfg) // as the databrew-stage binary does; a first crawl asks nothing
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var onPeak func()
	if *memprofile != "" {
		onPeak = func() { writeHeapProfile(*memprofile) }
	}
	stopHeap := heapPeak(onPeak)
	t0 := time.Now()
	report, err := stage.Run(context.Background(), *cfg, stage.Options{WriteBudget: writeBudget})
	elapsed := time.Since(t0)
	heap := stopHeap()
	runtime.ReadMemStats(&after)
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "stagebench:", err)
	}
	if report.Detail != "" {
		fmt.Fprintf(os.Stderr, "stagebench: stop %s: %s\n", report.Stop, report.Detail)
	}

	it := report.Items
	out, _ := json.Marshal(result{
		Pages: report.Requests.Total, Items: it.New + it.Changed + it.Unchanged,
		Failed: report.Requests.Failed, Outcome: fmt.Sprint(report.Outcome),
		Seconds:         report.FinishedAt.Sub(report.StartedAt).Seconds(),
		RunSeconds:      elapsed.Seconds(),
		Exported:        report.Export.Rows,
		Mallocs:         after.Mallocs - before.Mallocs,
		TotalAllocBytes: after.TotalAlloc - before.TotalAlloc,
		HeapPeakBytes:   heap,
	})
	fmt.Println(string(out))
	if err != nil {
		return 1
	}
	return 0
}

// parseBudget parses -write-budget: empty is 0 (the default budget),
// off a budget never reached; math.MaxInt64/4 rather than math.MaxInt64
// keeps the state's arithmetic on it (three quarters of it, half of it)
// from overflowing.
func parseBudget(s string) (int64, error) {
	switch s {
	case "":
		return 0, nil
	case "off":
		return math.MaxInt64 / 4, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("-write-budget: %q is not a positive number of bytes or off", s)
	}
	return n, nil
}

// fail prints msg and returns code.
func fail(code int, msg string) int {
	fmt.Fprintln(os.Stderr, "stagebench:", msg)
	return code
}

// writeHeapProfile writes the heap profile (as of the last garbage
// collection) to path, replacing it.
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stagebench:", err)
		return
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "stagebench:", err)
	}
}

// heapPeak samples the bytes of heap objects (live and not yet swept)
// every 10ms until stop is called, which returns the highest sample.
// onPeak, when not nil, is called each time a sample exceeds by 10% the
// sample of its previous call.
func heapPeak(onPeak func()) (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	done := make(chan struct{})
	result := make(chan uint64)
	go func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		peak := read()
		var reported uint64
		for {
			select {
			case <-done:
				result <- max(peak, read())
				return
			case <-t.C:
				v := read()
				peak = max(peak, v)
				if onPeak != nil && v > reported+reported/10 {
					reported = v
					onPeak()
				}
			}
		}
	}()
	return func() uint64 {
		close(done)
		return <-result
	}
}
