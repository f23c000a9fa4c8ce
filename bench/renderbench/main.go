// Command renderbench measures what rendering pages in headless Chromium
// costs the stage binary against plain HTTP on the same shop. It serves
// s17 (internal/testkit/shopsites, the Rendered kind) on loopback in this process
// and runs `-bin run` three times, each in a fresh folder:
//
//   - rendered: -pages pages of s17 (listing pages of 24 products and
//     their product pages), each a shell a script fills from a signed API,
//     loaded in Chromium with the shop's [render] config;
//   - plain: the same catalog rendered on the server (ServerSide), read
//     with the same config less [render];
//   - rendered: -mem-pages pages, for the memory a long rendered crawl
//     holds.
//
// With -cgroup (as root) each run gets a memory cgroup of its own without
// a limit, and the table gives the cgroup's peak usage: the stage plus its
// browser, whose processes are the stage's children. A warm-up run of 10
// pages outside any cgroup comes first, so that the browser's own files
// are in the page cache already and charged to none of them. Pages/s is the run's
// documents over the crawl's time in the verdict (started_at to
// finished_at), which leaves out the browser check before it; wall is the
// whole process.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/databrew/databrew-stage/bench/memcgroup"
	"github.com/databrew/databrew-stage/internal/testkit/shopsites"
	"github.com/databrew/databrew-stage/verdict"
)

// perPage is the products of a listing page.
const perPage = 24

func main() {
	bin := flag.String("bin", "bin/databrew-stage", "stage binary")
	pages := flag.Int("pages", 200, "pages (listing and product pages) of the rendered and plain runs")
	memPages := flag.Int("mem-pages", 1000, "pages of the long rendered run (0: none)")
	concurrency := flag.Int("concurrency", 4, "the config's policy.concurrency: tabs at once")
	cgroup := flag.Bool("cgroup", os.Geteuid() == 0, "run each in a memory cgroup and report its peak (needs root)")
	flag.Parse()
	abs, err := filepath.Abs(*bin)
	if err != nil {
		fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		fatal(fmt.Errorf("stage binary: %w (build it first: make build)", err))
	}
	runs := []struct {
		name   string
		pages  int
		server bool
	}{{"rendered", *pages, false}, {"plain", *pages, true}}
	if *memPages > 0 {
		runs = append(runs, struct {
			name   string
			pages  int
			server bool
		}{"rendered", *memPages, false})
	}
	// The cgroup that first reads a file is charged for its pages in the
	// page cache: a warm-up run outside any cgroup reads the browser's
	// files first, so no measured run pays for them.
	if _, err := runOnce(abs, 10, false, *concurrency, false, 0); err != nil {
		fatal(fmt.Errorf("warm-up: %w", err))
	}
	fmt.Printf("s17 on loopback, %d products per listing page, concurrency %d, memory cgroup: %v\n\n", perPage, *concurrency, *cgroup)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tpages\tcrawl s\tpages/s\tsubresources\twall s\tcgroup peak MiB\toutcome\trows\t")
	for i, r := range runs {
		res, err := runOnce(abs, r.pages, r.server, *concurrency, *cgroup, i+1)
		if err != nil {
			fatal(fmt.Errorf("%s %d: %w", r.name, r.pages, err))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%d\t%.1f\t%s\t%s\t%d\t\n", r.name, res.pages, res.crawl.Seconds(),
			float64(res.pages)/res.crawl.Seconds(), res.subresources, res.wall.Seconds(), res.peak, res.outcome, res.rows)
	}
	tw.Flush()
	fmt.Println("\npages: documents requested (requests.total); subresources: the scripts and API calls rendered pages made besides them.")
}

// result is what one run measured.
type result struct {
	pages, subresources, rows int
	crawl, wall               time.Duration
	peak, outcome             string
}

// runOnce serves a shop of about pages pages and runs the stage on it.
func runOnce(bin string, pages int, serverSide bool, concurrency int, cgroup bool, n int) (result, error) {
	listings := max(1, (pages+perPage)/(perPage+1))
	shop, err := shopsites.New(shopsites.Rendered, shopsites.Options{Products: pages - listings, PerPage: perPage, ServerSide: serverSide})
	if err != nil {
		return result{}, err
	}
	base, stop, err := serve(shop)
	if err != nil {
		return result{}, err
	}
	defer stop()
	cfg := shop.Config(base)
	if serverSide {
		// The same config less [render].
		start, end := strings.Index(cfg, "\n[render]\n"), strings.Index(cfg, "\n[policy]\n")
		cfg = cfg[:start] + cfg[end:]
	}
	cfg = strings.Replace(cfg, "\nconcurrency = 4\n", fmt.Sprintf("\nconcurrency = %d\n", concurrency), 1)
	cfg = strings.Replace(cfg, "\ntimeout = \"5s\"\n", "\ntimeout = \"30s\"\n", 1)
	dir, err := os.MkdirTemp("", "renderbench-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "shop.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return result{}, err
	}
	cmd := exec.Command(bin, "run", "--json", "--progress", "never", path)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var cg *memcgroup.Group
	if cgroup {
		if cg, err = memcgroup.New(0, n); err != nil {
			return result{}, err
		}
		defer cg.Remove()
		cg.Wrap(cmd)
	}
	r := result{peak: "-"}
	t0 := time.Now()
	runErr := cmd.Run()
	r.wall = time.Since(t0)
	if cg != nil {
		st, err := cg.Stats()
		if err != nil {
			return r, err
		}
		r.peak = fmt.Sprintf("%.0f", float64(st.Peak)/(1<<20))
	}
	var rep verdict.RunReport
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &rep); err != nil {
		return r, fmt.Errorf("no verdict (%v): %s", runErr, stderr.String())
	}
	r.pages, r.subresources, r.rows = rep.Requests.Total, rep.Requests.Subresources, int(rep.Export.Rows)
	r.crawl, r.outcome = rep.FinishedAt.Sub(rep.StartedAt), string(rep.Outcome)
	if want := len(shop.Truth(base)); r.rows != want {
		r.outcome += fmt.Sprintf(" (want %d rows)", want)
	}
	return r, nil
}

// serve serves shop on a loopback port.
func serve(shop http.Handler) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: shop, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "renderbench:", err)
	os.Exit(1)
}
