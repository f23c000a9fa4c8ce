// Command jsonbench measures what large JSON listing pages cost the stage
// binary. It serves -chains chains (start URLs) of -pages listing pages
// of -products products each (internal/testkit/bigjson: about 9 MB a page at
// 18,000, nested offers, variants and images; each page's "next" names
// the one after it in its chain) on loopback in this process, and runs
// `-bin run` on them once per mode of -modes:
//
//   - cards: listing.items = "data.products", nine fields per card, one
//     of them computed (sum(variants[].stock));
//   - links: listing.item_links = "data.products[].url", each item page a
//     small JSON document.
//
// Each run gets a fresh folder and, with -cgroup-limit (as root), a memory
// cgroup of its own limited to that size (none: no limit), as Kubernetes
// limits a pod; the binary keeps its own GOGC and GOMEMLIMIT. The table
// gives the wall time, the MB/s of listing JSON over it, the cgroup's
// peak usage, how often usage hit the limit, whether the OOM killer
// struck, and the run's outcome and exported rows.
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
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/databrew/databrew-stage/bench/memcgroup"
	"github.com/databrew/databrew-stage/internal/testkit/bigjson"
	"github.com/databrew/databrew-stage/verdict"
)

// The fields of the cards mode.
const cardFields = `
[item.fields]
id           = { json = "id", type = "int64" }
sku          = { json = "sku", required = true }
title        = { json = "title", required = true }
link         = { json = "url", url = true }
price        = { json = "price", type = "float64" }
available    = { json = "available", type = "bool" }
variant_skus = { json = "variants[].sku", multiple = true }
image        = { json = "images[0].src", url = true }
stock        = { json = "sum(variants[].stock)", type = "int64" }
`

func main() {
	bin := flag.String("bin", "bin/databrew-stage", "stage binary")
	products := flag.Int("products", 18000, "products per listing page")
	pages := flag.Int("pages", 3, "listing pages per chain")
	chains := flag.Int("chains", 1, "chains of listing pages: start URLs, read concurrently")
	modes := flag.String("modes", "cards,links", "comma-separated modes: cards, links")
	concurrency := flag.Int("concurrency", 8, "the config's policy.concurrency")
	cgLimit := flag.String("cgroup-limit", "", "run the stage in a new memory cgroup with this limit, e.g. 128MiB (none: without a limit); needs root")
	flag.Parse()

	limit := int64(-1)
	switch *cgLimit {
	case "":
	case "none":
		limit = 0
	default:
		var err error
		if limit, err = memcgroup.ParseSize(*cgLimit); err != nil {
			fatal(fmt.Errorf("-cgroup-limit: %w", err))
		}
	}
	abs, err := filepath.Abs(*bin)
	if err != nil {
		fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		fatal(fmt.Errorf("stage binary: %w (build it first: make build)", err))
	}
	bodies := make([][]byte, *chains**pages)
	for i := range bodies {
		bodies[i] = bigjson.Listing(i**products+1, *products)
	}
	page := bodies[0]
	base, stop, err := serve(bodies, *pages)
	if err != nil {
		fatal(err)
	}
	defer stop()

	fmt.Printf("%d chains of %d JSON listing pages of %d products (%.1f MB each) on loopback, concurrency %d, memory cgroup: %s\n\n",
		*chains, *pages, *products, float64(len(page))/1e6, *concurrency, map[string]string{"": "none", "none": "no limit"}[*cgLimit]+limitText(*cgLimit))
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\twall s\tlisting MB/s\tcgroup peak MiB\thit limit\tOOM kill\toutcome\trows\t")
	for i, mode := range strings.Split(*modes, ",") {
		r, err := runOnce(abs, mode, base, *chains, *concurrency, limit, i+1)
		if want := len(bodies) * *products; err == nil && r.rows != want {
			r.outcome += fmt.Sprintf(" (want %d rows)", want)
		}
		if err != nil {
			fatal(fmt.Errorf("%s: %w", mode, err))
		}
		mbs := float64(len(page)*len(bodies)) / 1e6 / r.wall.Seconds()
		fmt.Fprintf(tw, "%s\t%.2f\t%.1f\t%s\t%s\t%s\t%s\t%d\t\n", mode, r.wall.Seconds(), mbs, r.peak, r.failcnt, r.oom, r.outcome, r.rows)
	}
	tw.Flush()
	fmt.Println("\nlisting MB/s: the listing pages' bytes over the run's wall time (item pages, state and export included).")
}

func limitText(s string) string {
	if s == "" || s == "none" {
		return ""
	}
	return "limited to " + s
}

// serve serves the listing pages, perChain in each chain C at
// /api/products?chain=C&page=N, each naming the next of its chain in
// "next" (the last none), and a small JSON document at each
// /products/<id>.
func serve(bodies [][]byte, perChain int) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	for i, b := range bodies {
		next := []byte(`null`)
		if p := i%perChain + 1; p < perChain {
			next = []byte(`"\/api\/products?chain=` + strconv.Itoa(i/perChain) + `&page=` + strconv.Itoa(p+1) + `"`)
		}
		bodies[i] = bytes.Replace(b, []byte(`"\/api\/products?page=2"`), next, 1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/products", func(w http.ResponseWriter, r *http.Request) {
		c, err1 := strconv.Atoi(r.URL.Query().Get("chain"))
		p, err2 := strconv.Atoi(r.URL.Query().Get("page"))
		i := c*perChain + p - 1
		if err1 != nil || err2 != nil || p < 1 || p > perChain || i >= len(bodies) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(bodies[i])
	})
	mux.HandleFunc("/products/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"title": %q}`, strings.TrimPrefix(r.URL.Path, "/products/"))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// result is what one run measured.
type result struct {
	wall               time.Duration
	peak, failcnt, oom string
	outcome            string
	rows               int
}

// runOnce runs the stage once in mode in a fresh folder.
func runOnce(bin, mode, base string, chains, concurrency int, limit int64, n int) (result, error) {
	var listing string
	switch mode {
	case "cards":
		listing = "items = \"data.products\"\n\n[item]\nkey = \"sku\"\n" + cardFields
	case "links":
		listing = "item_links = \"data.products[].url\"\n\n[item]\nformat = \"json\"\n\n[item.fields]\ntitle = { json = \"title\", required = true }\n"
	default:
		return result{}, fmt.Errorf("unknown mode %q", mode)
	}
	dir, err := os.MkdirTemp("", "jsonbench-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	starts := make([]string, chains)
	for c := range starts {
		starts[c] = fmt.Sprintf("%s/api/products?chain=%d&page=1", base, c)
	}
	cfg := fmt.Sprintf(`name = "jsonbench"
start_urls = ["%s"]
storage = "state"
output = "out"

[policy]
concurrency = %d
max_links_per_page = 1000000
respect_robots = false

[listing]
format = "json"
next_page = "next"
%s`, strings.Join(starts, `", "`), concurrency, listing)
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return result{}, err
	}
	cmd := exec.Command(bin, "run", "--json", "--progress", "never", path)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var cg *memcgroup.Group
	if limit >= 0 {
		if cg, err = memcgroup.New(limit, n); err != nil {
			return result{}, err
		}
		defer cg.Remove()
		cg.Wrap(cmd)
	}
	r := result{peak: "-", failcnt: "-", oom: "-"}
	t0 := time.Now()
	runErr := cmd.Run()
	r.wall = time.Since(t0)
	if cg != nil {
		st, err := cg.Stats()
		if err != nil {
			return r, err
		}
		r.peak, r.failcnt, r.oom = fmt.Sprintf("%.0f", float64(st.Peak)/(1<<20)), strconv.FormatInt(st.Failcnt, 10), "no"
		if st.OOMKill > 0 {
			r.oom = "yes"
		}
	}
	var rep verdict.RunReport
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &rep); err != nil {
		r.outcome = "exit: " + fmt.Sprint(runErr)
		fmt.Fprintf(os.Stderr, "jsonbench: %s: %v\n%s", mode, runErr, lastLines(stderr.String(), 5))
		return r, nil
	}
	r.outcome = string(rep.Outcome)
	r.rows = int(rep.Export.Rows)
	return r, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n") + "\n"
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "jsonbench:", err)
	os.Exit(1)
}
