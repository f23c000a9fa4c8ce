// Package catalogsite is a bundled, in-memory catalog web site shaped like
// books.toscrape.com. It serves listing pages, item pages and robots.txt,
// its items can be changed while it serves, and it can inject faults
// (error statuses, 429s, hangs, connection resets, stubs, truncated and
// empty bodies) selected by request ordinal, time window and path, so it
// doubles as a reusable fault-injecting test site for crawler tests and
// benchmarks.
//
// A Site is an http.Handler and is safe for concurrent use.
package catalogsite

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a Site. The zero value is usable.
type Options struct {
	// Items is the initial number of items (default 100; negative means
	// none).
	Items int
	// PerPage is the number of items per listing page (default 20).
	PerPage int
	// Seed makes item data deterministic (default 1).
	Seed int64
	// GoneStatus is the status of a removed item's page: 404 (default) or
	// 410; values outside 400-599 mean 404.
	GoneStatus int
	// EmptyLastPage makes the last real listing page link to the empty page
	// that follows it.
	EmptyLastPage bool
	// Charset is "" or "utf-8" (default), "iso-8859-1" or "windows-1252";
	// HTML pages are encoded in it and declare it in a meta tag.
	Charset string
	// CharsetInMetaOnly leaves the charset out of the Content-Type header,
	// so clients must sniff the meta tag.
	CharsetInMetaOnly bool
	// Gzip compresses responses for requests that accept gzip.
	Gzip bool
	// NoETags turns conditional requests off: by default every page
	// carries an ETag (a digest of its body) and a request whose
	// If-None-Match names it is answered 304 Not Modified, without a body.
	NoETags bool
	// Latency is slept before answering each request other than robots.txt.
	Latency time.Duration
	// Now, when set, is the clock fault time windows (Fault.After, Until)
	// are measured with, so a test moves time instead of sleeping.
	Now func() time.Time
}

// Site is an in-memory catalog web site. Create it with New.
type Site struct {
	opts    Options
	charset *charsetInfo

	mu      sync.RWMutex
	items   []record // items[i].ID == i+1
	visible []int32  // indexes into items of non-removed items, ascending

	robots atomic.Pointer[string] // nil: robots.txt answers 404

	faults   atomic.Pointer[[]Fault]
	faultsMu sync.Mutex
	epoch    time.Time
	origin   atomic.Int64 // nanoseconds after epoch that time windows count from

	stats stats
}

// New returns a Site with opts' defaults filled in. It panics if
// opts.Charset is not supported (see SupportedCharset).
func New(opts Options) *Site {
	if opts.Items < 0 {
		opts.Items = 0
	} else if opts.Items == 0 {
		opts.Items = 100
	}
	if opts.PerPage <= 0 {
		opts.PerPage = 20
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.GoneStatus < 400 || opts.GoneStatus > 599 {
		opts.GoneStatus = 404
	}
	cs, ok := lookupCharset(opts.Charset)
	if !ok {
		panic(fmt.Sprintf("catalogsite: unsupported charset %q", opts.Charset))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Site{opts: opts, charset: cs, epoch: opts.Now()}
	s.items = make([]record, opts.Items)
	s.visible = make([]int32, opts.Items)
	for i := range s.items {
		s.items[i] = newRecord(makeItem(opts.Seed, i+1))
		s.visible[i] = int32(i)
	}
	robots := DefaultRobots
	s.robots.Store(&robots)
	return s
}

// Options returns the options the site runs with, defaults filled in.
func (s *Site) Options() Options { return s.opts }

// update applies fn to item id under the write lock; it reports whether
// the item exists.
func (s *Site) update(id int, fn func(it *Item)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id < 1 || id > len(s.items) {
		return false
	}
	r := &s.items[id-1]
	fn(&r.Item)
	r.refresh()
	return true
}

// SetPrice sets item id's price; it reports whether the item exists.
func (s *Site) SetPrice(id int, price float64) bool {
	return s.update(id, func(it *Item) { it.Price = price })
}

// SetStock sets item id's stock; it reports whether the item exists.
func (s *Site) SetStock(id, n int) bool {
	return s.update(id, func(it *Item) { it.Stock = n })
}

// SetTitle sets item id's title; it reports whether the item exists.
func (s *Site) SetTitle(id int, t string) bool {
	return s.update(id, func(it *Item) { it.Title = t })
}

// Remove takes item id off the listings and makes its page answer
// Options.GoneStatus. It reports whether a visible item was removed.
func (s *Site) Remove(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id < 1 || id > len(s.items) || s.items[id-1].Removed {
		return false
	}
	s.items[id-1].Removed = true
	if i, ok := slices.BinarySearch(s.visible, int32(id-1)); ok {
		s.visible = slices.Delete(s.visible, i, i+1)
	}
	return true
}

// Restore brings a removed item id back. It reports whether a removed item
// was restored.
func (s *Site) Restore(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id < 1 || id > len(s.items) || !s.items[id-1].Removed {
		return false
	}
	s.items[id-1].Removed = false
	i, _ := slices.BinarySearch(s.visible, int32(id-1))
	s.visible = slices.Insert(s.visible, i, int32(id-1))
	return true
}

// Add appends n new items with fresh IDs, visible at the end of the
// listings, and returns their IDs.
func (s *Site) Add(n int) []int {
	if n <= 0 {
		return nil
	}
	ids := make([]int, n)
	fresh := make([]record, n)
	s.mu.RLock()
	next := len(s.items) + 1
	s.mu.RUnlock()
	for {
		for i := range fresh {
			fresh[i] = newRecord(makeItem(s.opts.Seed, next+i))
		}
		s.mu.Lock()
		if len(s.items)+1 != next { // raced with another Add: regenerate
			next = len(s.items) + 1
			s.mu.Unlock()
			continue
		}
		for i := range fresh {
			ids[i] = next + i
			s.visible = append(s.visible, int32(len(s.items)))
			s.items = append(s.items, fresh[i])
		}
		s.mu.Unlock()
		return ids
	}
}

// Items returns a snapshot of all items in ID order, removed ones included
// with Removed set.
func (s *Site) Items() []Item {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Item, len(s.items))
	for i := range s.items {
		out[i] = s.items[i].Item.clone()
	}
	return out
}

// Item returns a copy of item id and whether it exists (removed or not).
func (s *Site) Item(id int) (Item, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if id < 1 || id > len(s.items) {
		return Item{}, false
	}
	return s.items[id-1].Item.clone(), true
}

// VisibleCount returns the number of items that are not removed.
func (s *Site) VisibleCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.visible)
}

// ListingPages returns the number of non-empty listing pages; the page
// after the last one is the empty listing page.
func (s *Site) ListingPages() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.pagesLocked()
}

func (s *Site) pagesLocked() int {
	return (len(s.visible) + s.opts.PerPage - 1) / s.opts.PerPage
}
