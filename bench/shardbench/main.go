// Command shardbench measures what sharding buys against a slow site: the
// bundled catalog, served in-process with a fixed latency per response, is
// crawled by the stage binary once as one process and once as -shards
// processes of one logical run (run --shard I/N --run-id, then commit),
// with one request at a time per process and one total rate cap (the
// config's delay, which each shard multiplies by N). The run is bound by
// the site's latency, not by CPU, so N shards should take about 1/N of
// one process's time, less the listing pages every shard walks.
//
// It prints one line per mode: processes, wall time, requests the site
// served, the achieved and the peak request rate (requests started in any
// one second), rows exported and the speedup over one process. It fails
// loudly (exit 1) when an export is not the whole catalog exactly once —
// the one process's rows and the committed sharded run's must hold the
// same keys — when the peak rate exceeds the cap (plus one request per
// process, the burst each pacer allows) or when the sharded run misses
// 80% of its ideal speedup.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// runID is the logical run the shards share.
const runID = "bench1"

// configTOML is the benchmark's config: one request at a time per process,
// delay as the total rate cap.
const configTOML = `name = "shardbench"
start_urls = [%s]
storage = %s
output = %s

[policy]
concurrency = 1
delay = %s
timeout = "30s"
retries = 2
min_body_bytes = 512
respect_robots = true
` + catalogsite.ExtractConfig

// opts are the command line's settings.
type opts struct {
	items, perPage, shards int
	latency, delay         time.Duration
	bin                    string
}

// result is one mode's line of the table.
type result struct {
	mode      string
	processes int
	wall      time.Duration
	requests  int64 // pages the site served, robots.txt aside
	peak      int   // most requests started within one second
	rows      int64
	keys      []string // the exported _key values, sorted
	detail    string   // a note under the table
}

func main() {
	var o opts
	flag.IntVar(&o.items, "items", 2000, "catalog size")
	flag.IntVar(&o.perPage, "per-page", 50, "items per listing page (every shard walks all listing pages)")
	flag.DurationVar(&o.latency, "latency", 40*time.Millisecond, "the site's latency per response")
	flag.DurationVar(&o.delay, "delay", 10*time.Millisecond, "[policy] delay: the total rate cap is one request per delay")
	flag.IntVar(&o.shards, "shards", 4, "shards of the sharded run")
	flag.StringVar(&o.bin, "bin", "bin/databrew-stage", "the stage binary (make build)")
	flag.Parse()
	if o.items < 1 || o.perPage < 1 || o.shards < 2 || o.latency < 0 || o.delay <= 0 {
		fmt.Fprintln(os.Stderr, "shardbench: need -items >= 1, -per-page >= 1, -shards >= 2, -latency >= 0, -delay > 0")
		os.Exit(2)
	}
	bin, err := filepath.Abs(o.bin)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		fail(fmt.Errorf("stage binary: %w (build it with make build, or pass -bin)", err))
	}
	o.bin = bin
	if err := bench(o); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "shardbench:", err)
	os.Exit(1)
}

// bench serves the site, measures both modes, prints the table and checks
// the goals.
func bench(o opts) error {
	site := catalogsite.New(catalogsite.Options{Items: o.items, PerPage: o.perPage, Latency: o.latency})
	rec := &recorder{site: site}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	rec.base = srv.URL
	root, err := os.MkdirTemp("", "shardbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)

	one, err := measure(o, rec, root, "one process", func(cfg string) (string, error) {
		return "", stage(o.bin, "run", "--json", "--progress", "never", cfg)
	})
	if err != nil {
		return err
	}
	sharded, err := measure(o, rec, root, fmt.Sprintf("%d shards", o.shards), func(cfg string) (string, error) {
		return runShards(o, cfg)
	})
	if err != nil {
		return err
	}
	one.processes, sharded.processes = 1, o.shards

	// The ideal: a process spends the longer of the latency and its
	// delay on each request, and every shard walks all listing pages.
	listings := (o.items + o.perPage - 1) / o.perPage
	ideal := float64(listings+o.items) * float64(max(o.latency, o.delay)) /
		(float64(listings+(o.items+o.shards-1)/o.shards) * float64(max(o.latency, time.Duration(o.shards)*o.delay)))
	capRate := float64(time.Second) / float64(o.delay)
	fmt.Printf("%d items, %d per listing page, site latency %s, concurrency 1 per process, delay %s (cap %.0f req/s in total; each shard waits %d x delay)\n\n",
		o.items, o.perPage, o.latency, o.delay, capRate, o.shards)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "mode\tprocesses\twall s\trequests\treq/s\tpeak req/s\trows\tspeedup\t")
	for _, r := range []result{one, sharded} {
		fmt.Fprintf(w, "%s\t%d\t%.1f\t%d\t%.1f\t%d\t%d\t%.2fx\t\n", r.mode, r.processes, r.wall.Seconds(), r.requests,
			float64(r.requests)/r.wall.Seconds(), r.peak, r.rows, one.wall.Seconds()/r.wall.Seconds())
	}
	_ = w.Flush()
	fmt.Printf("\n%s\nideal speedup %.2fx: every shard walks the %d listing pages and spends the longer of the latency and %d x delay on each request\n",
		sharded.detail, ideal, listings, o.shards)

	var missed []string
	check := func(ok bool, format string, args ...any) {
		if !ok {
			missed = append(missed, fmt.Sprintf(format, args...))
		}
	}
	for _, r := range []result{one, sharded} {
		check(r.rows == int64(o.items), "%s: manifest says %d rows, the catalog has %d items", r.mode, r.rows, o.items)
		check(len(r.keys) == o.items, "%s: the parquet files hold %d keys, the catalog has %d items", r.mode, len(r.keys), o.items)
		if d := duplicate(r.keys); d != "" {
			check(false, "%s: key %q exported more than once", r.mode, d)
		}
		limit := int(capRate) + r.processes
		check(r.peak <= limit, "%s: %d requests started within one second, over the cap of %.0f (+%d, one burst per process)",
			r.mode, r.peak, capRate, r.processes)
	}
	check(slices.Equal(slices.Compact(slices.Clone(one.keys)), slices.Compact(slices.Clone(sharded.keys))),
		"the one process's keys and the sharded run's differ")
	speedup := one.wall.Seconds() / sharded.wall.Seconds()
	check(speedup >= 0.8*ideal, "speedup %.2fx is under 80%% of the ideal %.2fx", speedup, ideal)
	if len(missed) > 0 {
		return errors.New("goal missed:\n  " + strings.Join(missed, "\n  "))
	}
	return nil
}

// measure runs one mode on fresh storage and output under root/<mode> and
// reads back what it published.
func measure(o opts, rec *recorder, root, mode string, run func(cfg string) (string, error)) (result, error) {
	dir := filepath.Join(root, strings.ReplaceAll(mode, " ", "-"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return result{}, err
	}
	cfg, err := writeConfig(dir, rec.base, o.delay)
	if err != nil {
		return result{}, err
	}
	rec.reset()
	t0 := time.Now()
	note, err := run(cfg)
	wall := time.Since(t0)
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", mode, err)
	}
	r := result{mode: mode, wall: wall, requests: rec.site.Requests(), peak: rec.peak(time.Second), detail: note}
	r.rows, r.keys, err = readExport(filepath.Join(dir, "out"))
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", mode, err)
	}
	fmt.Fprintf(os.Stderr, "shardbench: %s: %.1f s, %d requests, %d rows\n", mode, wall.Seconds(), r.requests, r.rows)
	return r, nil
}

// writeConfig writes the config into dir (state in dir/state, export in
// dir/out) and checks that it parses.
func writeConfig(dir, base string, delay time.Duration) (string, error) {
	doc := fmt.Sprintf(configTOML, strconv.Quote(catalogsite.StartURL(base)), strconv.Quote(filepath.Join(dir, "state")),
		strconv.Quote(filepath.Join(dir, "out")), strconv.Quote(delay.String()))
	path := filepath.Join(dir, "shardbench.toml")
	if _, err := config.Parse(path, []byte(doc)); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, []byte(doc), 0o644)
}

// runShards starts the shards of one logical run at once, waits for all,
// checks each kept its state in its own folder and nothing is visible in
// the output yet, and commits the run. It returns a note on the shards' times.
func runShards(o opts, cfg string) (string, error) {
	errs := make([]error, o.shards)
	took := make([]time.Duration, o.shards)
	var wg sync.WaitGroup
	for i := range o.shards {
		wg.Go(func() {
			t0 := time.Now()
			errs[i] = stage(o.bin, "run", "--json", "--progress", "never",
				"--shard", fmt.Sprintf("%d/%d", i, o.shards), "--run-id", runID, cfg)
			took[i] = time.Since(t0)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	dir := filepath.Dir(cfg)
	if found, _ := filepath.Glob(filepath.Join(dir, "out", "dt=*")); len(found) > 0 {
		return "", fmt.Errorf("the shards published %s before the commit", found[0])
	}
	for i := range o.shards {
		shardDir := filepath.Join(dir, "state", fmt.Sprintf("shard-%d-of-%d", i, o.shards))
		if _, err := os.Stat(shardDir); err != nil {
			return "", fmt.Errorf("shard %d kept no state in its own folder: %w", i, err)
		}
	}
	t0 := time.Now()
	if err := stage(o.bin, "commit", "--json", "--run-id", runID, "--shards", strconv.Itoa(o.shards), cfg); err != nil {
		return "", err
	}
	commit := time.Since(t0)
	return fmt.Sprintf("the shards took %.1f to %.1f s each, the commit %.2f s", slices.Min(took).Seconds(),
		slices.Max(took).Seconds(), commit.Seconds()), nil
}

// stage runs the stage binary with args, the command (run or commit) and
// --json first: the verdict it prints must be a success.
func stage(bin string, args ...string) error {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return fmt.Errorf("databrew-stage %s: %w\n%s%s", strings.Join(args, " "), err, stderr.Bytes(), stdout.Bytes())
	}
	var rep verdict.RunReport
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &rep); err != nil {
		return fmt.Errorf("databrew-stage %s: verdict: %w\n%s", strings.Join(args, " "), err, stdout.Bytes())
	}
	if rep.Outcome != verdict.OutcomeSuccess {
		return fmt.Errorf("databrew-stage %s: %s", strings.Join(args, " "), rep.Summary())
	}
	return nil
}
