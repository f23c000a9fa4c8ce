package catalogsite

import (
	"sync"
	"sync/atomic"
)

// stats holds the site's request counters.
type stats struct {
	requests atomic.Int64 // also the source of request ordinals
	robots   atomic.Int64
	served   [numFaultKinds]atomic.Int64
	paths    sync.Map // path -> *atomic.Int64
	// bytes counts the body bytes of pages served whole; notModified
	// the conditional requests answered 304.
	bytes, notModified atomic.Int64
}

func (st *stats) countPath(path string) {
	v, ok := st.paths.Load(path)
	if !ok {
		v, _ = st.paths.LoadOrStore(path, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(1)
}

// Requests returns the number of requests other than /robots.txt since the
// site's creation or the last ResetStats. It is also the ordinal of the
// latest such request.
func (s *Site) Requests() int64 { return s.stats.requests.Load() }

// RobotsRequests returns the number of /robots.txt requests.
func (s *Site) RobotsRequests() int64 { return s.stats.robots.Load() }

// Served returns how many times a fault of kind was applied.
func (s *Site) Served(kind FaultKind) int64 {
	if kind < 0 || kind >= numFaultKinds {
		return 0
	}
	return s.stats.served[kind].Load()
}

// PageRequests returns how many requests asked for path (the URL path,
// without query), faulted or not.
func (s *Site) PageRequests(path string) int64 {
	if v, ok := s.stats.paths.Load(path); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// BytesSent returns the body bytes of the pages and error pages the site
// sent (compressed, when it was), robots.txt aside.
func (s *Site) BytesSent() int64 { return s.stats.bytes.Load() }

// NotModified returns how many conditional requests the site answered
// with 304 Not Modified.
func (s *Site) NotModified() int64 { return s.stats.notModified.Load() }

// ResetStats zeroes all counters, including the request ordinal counter:
// the next request gets ordinal 1, so fault ordinal ranges count from the
// reset.
func (s *Site) ResetStats() {
	s.stats.requests.Store(0)
	s.stats.robots.Store(0)
	for i := range s.stats.served {
		s.stats.served[i].Store(0)
	}
	s.stats.paths.Clear()
	s.stats.bytes.Store(0)
	s.stats.notModified.Store(0)
}
