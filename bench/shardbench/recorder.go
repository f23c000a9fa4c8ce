package main

import (
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// recorder serves the site and notes when each page request (robots.txt
// aside, which no pacer spaces) arrived, for the peak rate.
type recorder struct {
	site *catalogsite.Site
	base string // the server's URL

	mu    sync.Mutex
	start time.Time
	at    []time.Duration // arrivals after start
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/robots.txt" {
		rec.mu.Lock()
		rec.at = append(rec.at, time.Since(rec.start))
		rec.mu.Unlock()
	}
	rec.site.ServeHTTP(w, r)
}

// reset starts the counts over: the site's and the arrivals.
func (rec *recorder) reset() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.site.ResetStats()
	rec.start = time.Now()
	rec.at = rec.at[:0]
}

// peak returns the most requests that arrived within any window of length
// d.
func (rec *recorder) peak(d time.Duration) int {
	rec.mu.Lock()
	at := slices.Clone(rec.at)
	rec.mu.Unlock()
	slices.Sort(at)
	most, lo := 0, 0
	for hi, t := range at {
		for at[lo] <= t-d {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}
