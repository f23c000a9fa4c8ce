// Command colly is the Colly v2 side of the databrew-stage benchmark. It
// crawls a catalog site the way the benchmark's databrew-stage config does:
// it starts at a listing page, follows item links and next-page links,
// and on each item page extracts title, price, stock, upc, tags and image
// with the same selectors and regular expressions, then hashes the values.
// Nothing is stored; items are only counted.
//
// It measures the crawl from the first request until the collector is
// idle and prints one JSON line to stdout:
//
//	{"pages": N, "items": N, "seconds": S, "mallocs": M, "total_alloc_bytes": B, "heap_peak_bytes": H, ...}
//
// where pages counts HTTP responses and errors other than robots.txt,
// mallocs and total_alloc_bytes are runtime.MemStats deltas around the
// crawl, and heap_peak_bytes is the largest Go heap seen during it. Peak
// RSS is measured from outside by the benchmark driver.
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
)

var (
	priceRE = regexp.MustCompile(`[0-9]+\.[0-9]+`)
	stockRE = regexp.MustCompile(`([0-9]+) available`)
)

// result is the JSON line the command prints.
type result struct {
	Pages           int64   `json:"pages"`
	Items           int64   `json:"items"`
	Errors          int64   `json:"errors"`
	Seconds         float64 `json:"seconds"`
	Mallocs         uint64  `json:"mallocs"`
	TotalAllocBytes uint64  `json:"total_alloc_bytes"`
	HeapPeakBytes   uint64  `json:"heap_peak_bytes"`
}

// item holds the fields extracted from one item page.
type item struct {
	title string
	price float64
	stock int64
	upc   string
	tags  []string
	image string
}

// hash returns a SHA-256 over a length-prefixed encoding of the values,
// the same amount of work databrew-stage does per item for its content
// hash.
func (it *item) hash() [32]byte {
	var stack [512]byte
	b := stack[:0]
	str := func(s string) { b = append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	str(it.title)
	b = binary.BigEndian.AppendUint64(b, uint64(it.price*100))
	b = binary.BigEndian.AppendUint64(b, uint64(it.stock))
	str(it.upc)
	b = binary.AppendUvarint(b, uint64(len(it.tags)))
	for _, t := range it.tags {
		str(t)
	}
	str(it.image)
	return sha256.Sum256(b)
}

// first returns the normalised text of the first element sel matches.
func first(e *colly.HTMLElement, sel string) string {
	return strings.Join(strings.Fields(e.DOM.Find(sel).First().Text()), " ")
}

func main() {
	start := flag.String("url", "", "start URL (a listing page)")
	concurrency := flag.Int("concurrency", 16, "parallel requests to the site")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the crawl to this file")
	flag.Parse()
	if *start == "" {
		fmt.Fprintln(os.Stderr, "colly: -url is required")
		os.Exit(2)
	}
	u, err := url.Parse(*start)
	if err != nil {
		fmt.Fprintln(os.Stderr, "colly:", err)
		os.Exit(2)
	}

	c := colly.NewCollector(colly.Async(true), colly.AllowedDomains(u.Hostname()))
	// databrew-stage respects robots.txt by default; so does this crawler.
	c.IgnoreRobotsTxt = false
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: *concurrency}); err != nil {
		fmt.Fprintln(os.Stderr, "colly:", err)
		os.Exit(2)
	}
	// The default transport keeps only two idle connections per host, so
	// at 16 parallel requests most connections would be closed after one
	// use. Keep as many as databrew-stage does (one per parallel request).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = *concurrency
	c.WithTransport(tr)

	var pages, items, errs atomic.Int64
	var sink atomic.Uint64 // keeps the hashes observable
	c.OnResponse(func(*colly.Response) { pages.Add(1) })
	c.OnError(func(r *colly.Response, err error) {
		pages.Add(1)
		if errs.Add(1) <= 5 {
			fmt.Fprintf(os.Stderr, "colly: %s: %v\n", r.Request.URL, err)
		}
	})
	c.OnHTML("article.product_pod h3 a", func(e *colly.HTMLElement) {
		_ = e.Request.Visit(e.Attr("href"))
	})
	c.OnHTML("li.next a", func(e *colly.HTMLElement) {
		_ = e.Request.Visit(e.Attr("href"))
	})
	c.OnHTML("article.product_page", func(e *colly.HTMLElement) {
		it := item{
			title: first(e, "div.product_main h1"),
			upc:   first(e, "table tr:nth-child(1) td"),
			image: e.Request.AbsoluteURL(e.DOM.Find("div.item img").First().AttrOr("src", "")),
		}
		if m := priceRE.FindString(first(e, "div.product_main p.price_color")); m != "" {
			it.price, _ = strconv.ParseFloat(m, 64)
		}
		if m := stockRE.FindStringSubmatch(first(e, "p.instock.availability")); m != nil {
			it.stock, _ = strconv.ParseInt(m[1], 10, 64)
		}
		for _, t := range e.ChildTexts("ul.tags li") {
			it.tags = append(it.tags, strings.Join(strings.Fields(t), " "))
		}
		if it.title == "" || it.upc == "" {
			return
		}
		h := it.hash()
		sink.Add(binary.BigEndian.Uint64(h[:8]))
		items.Add(1)
	})

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "colly:", err)
			os.Exit(1)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "colly:", err)
			os.Exit(1)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stopHeap := heapPeak()
	t0 := time.Now()
	if err := c.Visit(*start); err != nil {
		fmt.Fprintln(os.Stderr, "colly:", err)
		os.Exit(1)
	}
	c.Wait()
	elapsed := time.Since(t0)
	heap := stopHeap()
	runtime.ReadMemStats(&after)
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}

	out, _ := json.Marshal(result{
		Pages: pages.Load(), Items: items.Load(), Errors: errs.Load(),
		Seconds:         elapsed.Seconds(),
		Mallocs:         after.Mallocs - before.Mallocs,
		TotalAllocBytes: after.TotalAlloc - before.TotalAlloc,
		HeapPeakBytes:   heap,
	})
	fmt.Println(string(out))
}

// heapPeak samples the bytes of heap objects (live and not yet swept)
// every 10ms until stop is called, which returns the highest sample.
func heapPeak() (stop func() uint64) {
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
		for {
			select {
			case <-done:
				result <- max(peak, read())
				return
			case <-t.C:
				peak = max(peak, read())
			}
		}
	}()
	return func() uint64 {
		close(done)
		return <-result
	}
}
