// Command driver runs the crawler benchmark behind `make bench`. For each
// item count in -items it serves the bundled catalog site (catalogsite)
// on a loopback port inside this process, then runs the prebuilt Colly
// crawler (-colly) and the databrew-stage crawler (-stage) against it, one
// after the other, each as its own process with a fresh temporary folder;
// -runs repeats them, alternating, and keeps the run with the median
// pages/s.
//
// For every run it records what the crawler reports on stdout (pages,
// items, crawl seconds, allocations, see bench/colly and bench/stagebench),
// the wall time from starting the process to its exit, its CPU time (user
// plus system, which a busy machine disturbs less than wall time), and its
// memory, sampled from /proc/PID/status every 20ms: VmHWM (the peak
// resident set size) and the peaks of RssAnon (Go heap, stacks, runtime)
// and RssFile (file-backed pages: the executable and the mmapped bbolt
// file). It checks that each crawler fetched every item page and every
// listing page and extracted every item, and that the site answered as
// many requests, and prints one table for all runs.
//
// Peak RSS is not taken from rusage maxrss: Go starts children with
// vfork, and Linux carries the parent's RSS high-water mark across exec,
// so a child's maxrss is at least the driver's own RSS (which holds the
// whole catalog site).
//
// With -cgroup-limit each crawler runs in a new memory cgroup (see
// bench/memcgroup) limited to that size, or unlimited with -cgroup-limit none,
// and the table adds the cgroup's peak usage (page cache charged to it
// included) and whether the OOM killer killed the crawler. -write-budget
// is passed to databrew-stage (off: no write budget), and -colly ""
// runs databrew-stage alone.
//
// With -serve it only serves the site (with the first -items count) on
// -addr until interrupted, to profile one crawler by hand, e.g. with
// bench-stage -cpuprofile or -memprofile.
package main

import (
	"github.com/databrew/databrew-stage/bench/pressure"

	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/databrew/databrew-stage/bench/memcgroup"
	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// perPage is the number of items per listing page of the served site.
const perPage = 20

// sampleEvery is how often /proc/PID/status is read during a run.
const sampleEvery = 20 * time.Millisecond

// crawlerResult is the JSON line a crawler prints.
type crawlerResult struct {
	Pages           int64   `json:"pages"`
	Items           int64   `json:"items"`
	Errors          int64   `json:"errors"`
	Seconds         float64 `json:"seconds"`
	RunSeconds      float64 `json:"run_seconds"`
	Exported        int64   `json:"exported_rows"`
	Mallocs         uint64  `json:"mallocs"`
	TotalAllocBytes uint64  `json:"total_alloc_bytes"`
	HeapPeakBytes   uint64  `json:"heap_peak_bytes"`
}

// run is one crawler run and its measurements.
type run struct {
	crawler    string
	items      int
	res        crawlerResult
	wall       time.Duration
	cpu        time.Duration // user + system time of the process
	hwm        int64         // KiB, VmHWM
	anon, file int64         // KiB, sampled peaks
	siteReqs   int64         // requests the site answered, robots.txt excluded
	// cgroup is what the run's memory cgroup saw, nil without one;
	// killed says a SIGKILL ended the run (the OOM killer's signal).
	cgroup   *memcgroup.Stats
	killed   bool
	problems []string
	// runs is how many runs this one is the median of, with the range of
	// their pages/s.
	runs             int
	minRate, maxRate float64
}

func main() {
	itemsFlag := flag.String("items", "10000,100000", "comma-separated item counts of the catalog site")
	collyItems := flag.Int("colly-max-items", 0, "skip the Colly crawler for item counts above this (0: never skip)")
	concurrency := flag.Int("concurrency", 16, "parallel requests of each crawler")
	stageBin := flag.String("stage", "bin/bench-stage", "databrew-stage benchmark binary")
	collyBin := flag.String("colly", "bin/bench-colly", "Colly benchmark binary")
	collyName := flag.String("colly-name", "colly v2.3.0", "name of the Colly crawler in the table")
	runsFlag := flag.String("runs", "3,1", "comma-separated number of runs of each crawler per item count (the last one repeats); the table shows the run with the median pages/s")
	serve := flag.Bool("serve", false, "only serve the site on -addr until interrupted")
	addr := flag.String("addr", "127.0.0.1:0", "address to serve the site on with -serve")
	cgLimit := flag.String("cgroup-limit", "", "run each crawler in a new memory cgroup with this limit, e.g. 64MiB (none: a cgroup without a limit); needs root")
	budget := flag.String("write-budget", "", "databrew-stage's -write-budget (bytes, or off); empty: its default")
	flag.Parse()

	counts, err := parseCounts("-items", *itemsFlag)
	if err != nil {
		fatal(err)
	}
	reps, err := parseCounts("-runs", *runsFlag)
	if err != nil {
		fatal(err)
	}
	if *serve {
		serveOnly(counts[0], *addr)
		return
	}
	opts := benchOptions{concurrency: *concurrency, budget: *budget, cgroupLimit: -1}
	switch *cgLimit {
	case "":
	case "none":
		opts.cgroupLimit = 0
	default:
		if opts.cgroupLimit, err = memcgroup.ParseSize(*cgLimit); err != nil {
			fatal(fmt.Errorf("-cgroup-limit: %w", err))
		}
	}
	for _, bin := range []string{*stageBin, *collyBin} {
		if bin == "" {
			continue
		}
		if _, err := os.Stat(bin); err != nil {
			fatal(fmt.Errorf("crawler binary: %w (build it first, e.g. with make bench)", err))
		}
	}

	fmt.Printf("catalog site on 127.0.0.1, %d items per listing page, concurrency %d, GOMAXPROCS of each process = %d CPUs\n",
		perPage, *concurrency, numCPU())
	limit := map[string]string{"": "none", "none": "one without a limit"}[*cgLimit]
	fmt.Printf("databrew-stage write budget: %s; memory cgroup: %s\n", cmp.Or(*budget, "default"), cmp.Or(limit, "limited to "+*cgLimit))
	fmt.Printf("%s\n\n", pressure.Line("before the runs"))
	// A deferred call, not a deferred Println: the line is read at the end.
	defer func() { fmt.Println(pressure.Line("after the runs")) }()
	var runs []run
	for i, n := range counts {
		crawlers := []struct{ name, bin string }{{*collyName, *collyBin}, {"databrew-stage", *stageBin}}
		if *collyBin == "" || *collyItems > 0 && n > *collyItems {
			crawlers = crawlers[1:]
		}
		repeats := reps[min(i, len(reps)-1)]
		all := make([][]run, len(crawlers))
		// Alternate the crawlers so that a busy spell on the machine
		// does not fall on the runs of one of them only.
		for rep := range repeats {
			for j, c := range crawlers {
				fmt.Fprintf(os.Stderr, "bench: %s, %d items, run %d of %d ...\n", c.name, n, rep+1, repeats)
				r, err := benchOne(c.name, c.bin, n, opts)
				if err != nil {
					fatal(fmt.Errorf("%s at %d items: %w", c.name, n, err))
				}
				all[j] = append(all[j], r)
			}
		}
		for _, rs := range all {
			runs = append(runs, median(rs))
		}
	}
	printTable(runs)
}

// serveOnly serves a site with n items on addr until SIGINT or SIGTERM.
func serveOnly(n int, addr string) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	site := catalogsite.New(catalogsite.Options{Items: n, PerPage: perPage})
	base, wait, err := site.Serve(ctx, addr)
	if err != nil {
		fatal(err)
	}
	fmt.Println(catalogsite.StartURL(base))
	if err := wait(); err != nil {
		fatal(err)
	}
}

// benchOptions are how each crawler runs.
type benchOptions struct {
	concurrency int
	budget      string // databrew-stage's -write-budget
	// cgroupLimit is the memory cgroup's limit in bytes: 0 a cgroup
	// without one, negative no cgroup.
	cgroupLimit int64
}

// cgroups counts the cgroups made, for their names.
var cgroups int

// benchOne serves a fresh site with n items and runs one crawler on it.
func benchOne(name, bin string, n int, opts benchOptions) (run, error) {
	site := catalogsite.New(catalogsite.Options{Items: n, PerPage: perPage})
	ctx, cancel := context.WithCancel(context.Background())
	base, wait, err := site.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		cancel()
		return run{}, err
	}
	defer func() {
		cancel()
		_ = wait()
	}()
	dir, err := os.MkdirTemp("", "databrew-bench-")
	if err != nil {
		return run{}, err
	}
	defer os.RemoveAll(dir)

	abs, err := filepath.Abs(bin)
	if err != nil {
		return run{}, err
	}
	args := []string{"-url", catalogsite.StartURL(base), "-concurrency", strconv.Itoa(opts.concurrency)}
	if name == "databrew-stage" {
		args = append(args, "-dir", dir)
		if opts.budget != "" {
			args = append(args, "-write-budget", opts.budget)
		}
	}
	cmd := exec.Command(abs, args...)
	var cg *memcgroup.Group
	if opts.cgroupLimit >= 0 {
		cgroups++
		if cg, err = memcgroup.New(opts.cgroupLimit, cgroups); err != nil {
			return run{}, err
		}
		defer func() {
			if err := cg.Remove(); err != nil {
				fmt.Fprintln(os.Stderr, "bench: remove cgroup:", err)
			}
		}()
		dropCache(abs)
		cg.Wrap(cmd)
	}
	cmd.Dir = dir
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr

	r := run{crawler: name, items: n}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return r, err
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.hwm, r.anon, r.file = samplePeaks(cmd.Process.Pid, stop)
	}()
	runErr := cmd.Wait()
	r.wall = time.Since(t0)
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	close(stop)
	wg.Wait()
	r.siteReqs = site.Requests()
	if runErr != nil {
		r.problems = append(r.problems, fmt.Sprintf("exited: %v", runErr))
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		r.killed = true
	}
	if cg != nil {
		st, err := cg.Stats()
		if err != nil {
			return r, err
		}
		r.cgroup = &st
		if st.OOMKill > 0 {
			r.problems = append(r.problems, fmt.Sprintf("the OOM killer killed %d process(es) in its cgroup", st.OOMKill))
		}
	}
	if err := json.Unmarshal(lastLine(stdout.Bytes()), &r.res); err != nil {
		if r.killed {
			// Killed (by the OOM killer, as a rule) before it printed one.
			return r, nil
		}
		return r, fmt.Errorf("reading its result line %q: %w", stdout.String(), err)
	}

	wantPages := int64(n + (n+perPage-1)/perPage)
	if r.res.Pages != wantPages {
		r.problems = append(r.problems, fmt.Sprintf("fetched %d pages, want %d", r.res.Pages, wantPages))
	}
	if r.siteReqs != wantPages {
		r.problems = append(r.problems, fmt.Sprintf("site answered %d requests, want %d", r.siteReqs, wantPages))
	}
	if r.res.Items != int64(n) {
		r.problems = append(r.problems, fmt.Sprintf("extracted %d items, want %d", r.res.Items, n))
	}
	if name == "databrew-stage" && r.res.Exported != int64(n) {
		r.problems = append(r.problems, fmt.Sprintf("exported %d rows, want %d", r.res.Exported, n))
	}
	if r.res.Errors > 0 {
		r.problems = append(r.problems, fmt.Sprintf("%d failed requests", r.res.Errors))
	}
	return r, nil
}

// samplePeaks reads /proc/PID/status every sampleEvery until stop is
// closed and returns the last VmHWM and the peaks of RssAnon and RssFile,
// in KiB.
func samplePeaks(pid int, stop <-chan struct{}) (hwm, anon, file int64) {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		h, a, f := readStatus(path)
		hwm, anon, file = max(hwm, h), max(anon, a), max(file, f)
		select {
		case <-stop:
			return hwm, anon, file
		case <-t.C:
		}
	}
}

// readStatus returns the VmHWM, RssAnon and RssFile lines of a status
// file, in KiB; zero when the process is gone.
func readStatus(path string) (hwm, anon, file int64) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "VmHWM:"):
			hwm = kib(line)
		case strings.HasPrefix(line, "RssAnon:"):
			anon = kib(line)
		case strings.HasPrefix(line, "RssFile:"):
			file = kib(line)
		}
	}
	return hwm, anon, file
}

// kib parses the number of a "Key:   123 kB" status line.
func kib(line string) int64 {
	fs := strings.Fields(line)
	if len(fs) < 2 {
		return 0
	}
	v, _ := strconv.ParseInt(fs[1], 10, 64)
	return v
}

// printTable prints every run, a warning row under each run that did not
// crawl the whole site, and the pages/s ratio at the smallest item count.
func printTable(runs []run) {
	const head = "%-16s %7s %7s %8s %8s %8s %8s %11s %10s %10s %10s %10s %12s %14s %11s %8s  %s\n"
	const row = "%-16s %7d %7d %8.2f %8s %8.2f %8.0f %11.0f %10s %10s %10s %10s %12.0f %14.1f %11s %8s  %s\n"
	fmt.Printf(head, "crawler", "items", "pages", "seconds", "export s", "wall s", "pages/s", "CPU µs/page", "peak RSS", "RSS anon", "RSS file", "Go heap",
		"allocs/page", "KB alloc/page", "cgroup peak", "OOM kill", "median of (pages/s range)")
	for _, r := range runs {
		pages := float64(max(r.res.Pages, 1))
		spread := "1 run"
		if r.runs > 1 {
			spread = fmt.Sprintf("%d runs (%.0f-%.0f)", r.runs, r.minRate, r.maxRate)
		}
		export := "-"
		if r.res.RunSeconds > 0 {
			export = fmt.Sprintf("%.2f", r.res.RunSeconds-r.res.Seconds)
		}
		cgPeak, oom := "-", "-"
		if r.cgroup != nil {
			cgPeak, oom = mib(r.cgroup.Peak/1024), "no"
			if r.cgroup.OOMKill > 0 || r.killed {
				oom = "yes"
			}
		}
		fmt.Printf(row, r.crawler, r.items, r.res.Pages, r.res.Seconds, export, r.wall.Seconds(), rate(&r), float64(r.cpu.Microseconds())/pages,
			mib(r.hwm), mib(r.anon), mib(r.file), mib(int64(r.res.HeapPeakBytes/1024)),
			float64(r.res.Mallocs)/pages, float64(r.res.TotalAllocBytes)/pages/1024, cgPeak, oom, spread)
		for _, p := range r.problems {
			fmt.Printf("  WARNING %s at %d items: %s\n", r.crawler, r.items, p)
		}
	}
	fmt.Println()
	if len(runs) == 0 {
		return
	}
	var sizes []int
	for _, r := range runs {
		if !slices.Contains(sizes, r.items) {
			sizes = append(sizes, r.items)
		}
	}
	for _, size := range sizes {
		printRatio(runs, size)
	}
	var peaks []string
	for _, r := range runs {
		if r.crawler == "databrew-stage" {
			peaks = append(peaks, fmt.Sprintf("%s at %s (anon %s, file %s)", mib(r.hwm), short(r.items), mib(r.anon), mib(r.file)))
		}
	}
	if len(peaks) > 1 {
		fmt.Printf("databrew-stage peak RSS: %s\n", strings.Join(peaks, ", "))
	}
	fmt.Println(`
seconds: the crawl; export s: databrew-stage's export after the crawl; wall s: process start to exit.
pages/s: pages / seconds. CPU µs/page: user + system time of the whole process / pages.
peak RSS: VmHWM. RSS anon / RSS file: peaks of RssAnon / RssFile (file-backed pages include the
executable and databrew-stage's mmapped bbolt state file). Go heap: peak of heap objects.
allocs and KB alloc per page: counted around the crawl (for databrew-stage around stage.Run,
its export included). cgroup peak: the peak usage of the crawler's memory cgroup (-cgroup-limit),
page cache charged to it included; OOM kill: whether the OOM killer killed it (a run killed
before its result has zeros in the crawler's columns).`)
}

// printRatio prints databrew-stage's rate against Colly's at one catalog
// size, the runs shown in the table.
func printRatio(runs []run, size int) {
	var colly, stage *run
	for i := range runs {
		if runs[i].items != size {
			continue
		}
		if runs[i].crawler == "databrew-stage" {
			stage = &runs[i]
		} else {
			colly = &runs[i]
		}
	}
	switch {
	case colly == nil || stage == nil:
	case colly.res.Pages == 0 || stage.res.Pages == 0:
		// A crawler killed before its result (an OOM kill under
		// -cgroup-limit) has no rate to compare.
		var unfinished []string
		for _, r := range []*run{colly, stage} {
			if r.res.Pages == 0 {
				unfinished = append(unfinished, r.crawler)
			}
		}
		fmt.Printf("databrew-stage / colly at %s: no ratio: %s did not finish (see the warnings above)\n", short(size),
			strings.Join(unfinished, " and "))
	default:
		fmt.Printf("databrew-stage / colly pages/s at %s: %.2fx (crawl), %.2fx (process wall time); peak RSS: %.2fx\n", short(size),
			rate(stage)/rate(colly), colly.wall.Seconds()/stage.wall.Seconds(), float64(stage.hwm)/float64(max(colly.hwm, 1)))
	}
}

func rate(r *run) float64 {
	if r.res.Seconds <= 0 {
		return 0
	}
	return float64(r.res.Pages) / r.res.Seconds
}

// mib formats KiB as MiB.
func mib(k int64) string { return fmt.Sprintf("%.1f MiB", float64(k)/1024) }

// short formats an item count as 10k, 100k or the plain number.
func short(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// lastLine returns the last non-empty line of b.
func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

// parseCounts parses the comma-separated list of positive numbers of flag
// name.
func parseCounts(name, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s: %q is not a positive number", name, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// median returns the run of rs with the median pages/s (the lower one of
// an even count), its problems joined with those of the other runs and
// the range of pages/s over all of them.
func median(rs []run) run {
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b run) int { return cmp.Compare(rate(&a), rate(&b)) })
	m := sorted[(len(sorted)-1)/2]
	m.runs = len(rs)
	m.minRate, m.maxRate = rate(&sorted[0]), rate(&sorted[len(sorted)-1])
	m.problems = nil
	for i, r := range rs {
		for _, p := range r.problems {
			if len(rs) > 1 {
				p = fmt.Sprintf("run %d: %s", i+1, p)
			}
			m.problems = append(m.problems, p)
		}
	}
	return m
}

// numCPU returns the number of CPUs the crawler processes may use.
func numCPU() int {
	if v, err := strconv.Atoi(os.Getenv("GOMAXPROCS")); err == nil && v > 0 {
		return v
	}
	return runtime.NumCPU()
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
