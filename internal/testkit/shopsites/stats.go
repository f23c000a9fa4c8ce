package shopsites

import (
	"sync"
	"sync/atomic"
)

// stats holds a shop's request counters.
type stats struct {
	requests atomic.Int64 // also the source of request ordinals
	robots   atomic.Int64
	paths    sync.Map // path -> *atomic.Int64
}

func (st *stats) countPath(path string) {
	v, ok := st.paths.Load(path)
	if !ok {
		v, _ = st.paths.LoadOrStore(path, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}

// Requests returns the number of requests other than /robots.txt the shop
// has answered (rejected ones included). It is also the ordinal of the
// latest such request.
func (s *Shop) Requests() int64 { return s.stats.requests.Load() }

// RobotsRequests returns the number of /robots.txt requests.
func (s *Shop) RobotsRequests() int64 { return s.stats.robots.Load() }

// PageRequests returns how many requests asked for path (the URL path,
// without query), whatever the answer.
func (s *Shop) PageRequests(path string) int64 {
	if v, ok := s.stats.paths.Load(path); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// Drifted reports whether the shop has answered Options.DriftAfter
// requests, so every product page from now on has the drifted markup.
func (s *Shop) Drifted() bool {
	return s.opts.DriftAfter > 0 && s.stats.requests.Load() >= s.opts.DriftAfter
}
