// Command rerunbench measures what a rerun costs: it serves the bundled
// catalog on loopback from a child process and runs the stage on it
// (through stage.Run, each run in a new process, with the benchmark's
// config and tombstones on) four times per mode: a first run; a rerun on
// the unchanged site; a rerun after one catalog step (about 1% removed,
// 2% repriced on the cards, 1% restocked on the item pages only, 1%
// added); and a rerun max_after later on a clock it moves (no sleeping),
// when every item page is due. The modes are "conditional" (no [revisit]:
// every page is requested, conditionally) and "revisit" ([revisit] card,
// min_after 1d, max_after 14d).
//
// It prints a table: each run's wall and CPU seconds (the CPU time is
// steadier on a shared machine), the heap bytes it allocated (steadier
// still), the page faults it took, and its
// process's wall time, start and exit included. It checks the goals:
// every unchanged rerun (-reruns of them, each in the table) with at most
// 5% of the first run's bytes and no row, and under [revisit] at least
// 10x faster; after a step, under [revisit] at most the listing pages
// plus 1.2x the new and repriced items requested; every new, removed and
// repriced item exported in that run, and the restocked ones by then
// (conditional) or by the run max_after later ([revisit]). It exits 1
// when a goal is missed.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/databrew/databrew-stage/bench/pressure"
	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// The tables each mode adds to the benchmark config.
const (
	exportTOML  = "\n[export]\ntombstones = true\n"
	revisitTOML = `
[revisit]
card = "article.product_pod"
min_after = "1d"
max_after = "14d"
`
)

// shiftedClock is the system clock moved ahead by off.
type shiftedClock struct {
	crawl.SystemClock
	off time.Duration
}

func (c shiftedClock) Now() time.Time { return time.Now().Add(c.off) }

// cpuProfile and memProfile name the files of the -cpuprofile and
// -memprofile flags; reruns is -reruns.
var (
	cpuProfile, memProfile string
	reruns                 int
)

// row is one run's line of the table.
type row struct {
	items            int
	mode, run        string
	seconds          float64
	cpu, process     float64
	faults           int64
	alloc            uint64
	requests, notMod int
	skipped, rows    int
	bytes            int64
	report           verdict.RunReport
}

func main() {
	if req := os.Getenv(runEnv); req != "" {
		if err := runChild(req); err != nil {
			fmt.Fprintln(os.Stderr, "rerunbench run:", err)
			os.Exit(1)
		}
		return
	}
	if n, err := strconv.Atoi(os.Getenv(siteEnv)); err == nil {
		if err := serveSite(n); err != nil {
			fmt.Fprintln(os.Stderr, "rerunbench site:", err)
			os.Exit(1)
		}
		return
	}
	sizes := flag.String("items", "10000", "catalog sizes, comma-separated")
	concurrency := flag.Int("concurrency", 16, "parallel requests to the site")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of each unchanged rerun under [revisit] to this file name with the rerun's number added (F.1 to F.n; go tool pprof reads them together)")
	flag.StringVar(&memProfile, "memprofile", "", "write an allocation profile of each unchanged rerun under [revisit] to this file name with the rerun's number added, as -cpuprofile does")
	modes := flag.String("modes", "conditional,revisit", "the modes to measure, comma-separated")
	flag.IntVar(&reruns, "reruns", 5, "how many times to run the unchanged rerun; each must meet the goals")
	flag.Parse()
	if reruns < 1 {
		fmt.Fprintln(os.Stderr, "rerunbench: -reruns must be at least 1")
		os.Exit(2)
	}
	fmt.Println(pressure.Line("before the runs"))
	var rows []row
	ok := true
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 {
			fmt.Fprintf(os.Stderr, "rerunbench: -items: %q is not a size of at least 100\n", f)
			os.Exit(2)
		}
		for _, mode := range strings.Split(*modes, ",") {
			if mode != "conditional" && mode != "revisit" {
				fmt.Fprintf(os.Stderr, "rerunbench: -modes: %q is neither conditional nor revisit\n", mode)
				os.Exit(2)
			}
			rs, good, err := measure(n, mode, *concurrency)
			if err != nil {
				fmt.Fprintln(os.Stderr, "rerunbench:", err)
				os.Exit(1)
			}
			rows = append(rows, rs...)
			ok = ok && good
		}
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "items\tmode\trun\tseconds\tvs first\tCPU s\talloc MiB\tpage faults\tprocess s\trequests\tnot modified\tskipped\tbody MiB\tvs first\trows\t")
	var first row
	for _, r := range rows {
		if r.run == "first" {
			first = r
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%.3f\t%.1fx\t%.3f\t%.1f\t%d\t%.3f\t%d\t%d\t%d\t%.1f\t%.1f%%\t%d\t\n", r.items, r.mode, r.run, r.seconds,
			first.seconds/max(r.seconds, 1e-6), r.cpu, float64(r.alloc)/(1<<20), r.faults, r.process, r.requests, r.notMod, r.skipped, float64(r.bytes)/(1<<20),
			100*float64(r.bytes)/float64(max(first.bytes, 1)), r.rows)
	}
	_ = w.Flush()
	fmt.Println(pressure.Line("after the runs"))
	if !ok {
		os.Exit(1)
	}
}

// measure runs the four runs of one mode on a fresh catalog of n items.
func measure(n int, mode string, concurrency int) ([]row, bool, error) {
	site, err := startSite(n)
	if err != nil {
		return nil, false, err
	}
	defer site.close()
	dir, err := os.MkdirTemp("", "rerunbench-")
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(dir)
	extra := exportTOML
	if mode == "revisit" {
		extra += revisitTOML
	}
	var rows []row
	// run makes one run; profile names the files of its profiles, if any.
	run := func(name string, off time.Duration, profile profiles) (row, error) {
		var ok bool
		if err := site.ask("reset", &ok); err != nil {
			return row{}, err
		}
		rq := runRequest{StartURL: catalogsite.StartURL(site.URL), Dir: dir, Concurrency: concurrency, Extra: extra, Offset: off,
			CPUProfile: profile.cpu, MemProfile: profile.mem}
		res, process, err := runInChild(rq)
		if err != nil {
			return row{}, fmt.Errorf("%s run: %w", name, err)
		}
		var bytes int64
		if askErr := site.ask("bytes", &bytes); askErr != nil {
			return row{}, askErr
		}
		rep := res.Report
		r := row{items: n, mode: mode, run: name, seconds: res.Seconds, cpu: res.CPU, alloc: res.Alloc, faults: res.Faults, process: process, requests: rep.Requests.Total,
			notMod: rep.Requests.NotModified, skipped: rep.Items.Skipped, rows: rep.Export.Rows, bytes: bytes, report: rep}
		switch {
		case res.Err != "":
			err = fmt.Errorf("%s run: %s", name, res.Err)
		case rep.Outcome != verdict.OutcomeSuccess:
			err = fmt.Errorf("%s run: %s", name, rep.Summary())
		}
		rows = append(rows, r)
		return r, err
	}
	first, err := run("first", 0, profiles{})
	if err != nil {
		return nil, false, err
	}
	// The unchanged rerun is short, so a busy machine sways it most: it
	// runs reruns times, each in the table and each checked against the
	// goals.
	var sames []row
	for i := range reruns {
		var profile profiles
		if mode == "revisit" {
			profile = profiles{cpu: numbered(cpuProfile, i+1), mem: numbered(memProfile, i+1)}
		}
		same, err := run(fmt.Sprintf("unchanged %d/%d", i+1, reruns), time.Hour, profile)
		if err != nil {
			return nil, false, err
		}
		sames = append(sames, same)
	}
	var step catalogsite.StepCounts
	if err := site.ask("step 1", &step); err != nil {
		return nil, false, err
	}
	after, err := run("after a step", 2*time.Hour, profiles{})
	if err != nil {
		return nil, false, err
	}
	later, err := run("max_after later", 14*24*time.Hour+3*time.Hour, profiles{})
	if err != nil {
		return nil, false, err
	}
	good := true
	check := func(cond bool, format string, args ...any) {
		if !cond {
			good = false
			fmt.Fprintf(os.Stderr, "rerunbench: %d items, %s: goal missed: %s\n", n, mode, fmt.Sprintf(format, args...))
		}
	}
	listings := (n + site.PerPage - 1) / site.PerPage
	for _, same := range sames {
		if mode == "revisit" { // conditional requests alone still make every request
			check(first.seconds >= 10*same.seconds, "%s: %.2fs, first run %.2fs: not 10x faster", same.run, same.seconds, first.seconds)
		}
		check(same.bytes*20 <= first.bytes, "%s sent %d body bytes, first %d: over 5%%", same.run, same.bytes, first.bytes)
		check(same.rows == 0, "%s exported %d rows", same.run, same.rows)
	}
	budget := listings + 1 + (12*(step.Added+step.Repriced)+9)/10
	if mode == "revisit" {
		check(after.requests <= budget, "after a step: %d requests, budget %d (listings %d + 1.2 x (%d new + %d repriced))",
			after.requests, budget, listings, step.Added, step.Repriced)
	}
	it := after.report.Items
	check(it.New == step.Added && it.Removed == step.Removed && it.Changed >= step.Repriced,
		"after a step: items %+v; the step added %d, removed %d, repriced %d", it, step.Added, step.Removed, step.Repriced)
	if mode == "revisit" {
		check(later.report.Items.Changed == step.Restocked, "max_after later: %d changed, the step restocked %d", later.report.Items.Changed, step.Restocked)
	} else {
		check(it.Changed == step.Repriced+step.Restocked, "after a step: %d changed, the step repriced %d and restocked %d", it.Changed, step.Repriced, step.Restocked)
	}
	return rows, good, nil
}

// profiles names the files a run writes its CPU and allocation profiles
// to; empty for none.
type profiles struct{ cpu, mem string }

// numbered returns name with the rerun's number i added, or "" when name
// is.
func numbered(name string, i int) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf("%s.%d", name, i)
}
