package crawl

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// reschedule sets an item page's next visit: its interval halves when its
// items changed and grows by half when they did not (the first is
// MinAfter), within the policy's bounds, and it is due after the interval
// less up to a quarter of it.
func (r *run) reschedule(m, old *PageMemo, changed bool) {
	p := r.e.s.Revisit
	interval := p.MinAfter
	if old != nil && old.Interval > 0 {
		interval = old.Interval * 3 / 2
		if changed {
			interval = old.Interval / 2
		}
	}
	interval = min(max(interval, p.MinAfter), p.MaxAfter)
	jitter := time.Duration(rand.Int64N(int64(interval)/4 + 1))
	m.Interval, m.Due = interval, r.e.d.Clock.Now().Add(interval-jitter).UTC()
}

// itemsChanged reports whether a page's items differ from a memo's: other
// keys, or other content hashes.
func itemsChanged(before, now []ItemRef) bool {
	if len(before) != len(now) {
		return true
	}
	hashes := make(map[string]string, len(before))
	for _, it := range before {
		hashes[it.Key] = it.Hash
	}
	for _, it := range now {
		if h, ok := hashes[it.Key]; !ok || h != it.Hash {
			return true
		}
	}
	return false
}

// sortDue splits a listing's item links under the revisit policy: a link
// is due when its page has no memo (a new item), when its card differs
// from the one the page's memo recorded (a change the card shows), or when
// the page's Due has come. The others are skipped: their items count as
// seen.
func (r *run) sortDue(c *completion) {
	now := r.e.d.Clock.Now()
	items := r.itemLinks(c.links)
	dues := c.aheadDues
	if dues == nil || !slices.Equal(items, c.aheadItems) {
		dues = r.itemDues(items)
	}
	// Each item link's lot is decided first, so that the links to queue
	// (a rerun's are mostly none but the next listing page) take one slice
	// of their own size. The item links this shard owns are items, in
	// order: an item link is one when it is the next of them (ownership
	// goes by URL, so another shard's link never equals it), which spares
	// hashing each link's URL again.
	var small [4]uint64
	skip := small[:]
	if len(items) > 64*len(small) {
		skip = make([]uint64, (len(items)+63)/64)
	}
	owned := func(l Entry, i int) bool { return l.Kind == KindItem && i < len(items) && l.URL == items[i] }
	skips := 0
	i := 0
	for _, l := range c.links {
		if !owned(l, i) {
			continue
		}
		if d := dues[i]; d.Found && d.Tag == r.e.s.MemoTag && !d.Due.IsZero() && now.Before(d.Due) && d.Card == l.Card {
			skip[i/64] |= 1 << (i % 64)
			skips++
		}
		i++
	}
	c.due = make([]Entry, 0, len(c.links)-skips)
	c.skips = make([]Skip, 0, skips)
	i = 0
	for _, l := range c.links {
		switch {
		case l.Kind != KindItem:
			c.due = append(c.due, l)
		case !owned(l, i):
			// another shard's page
		default:
			if skip[i/64]&(1<<(i%64)) != 0 {
				c.skips = append(c.skips, Skip{URL: l.URL, Items: dues[i].Items})
			} else {
				c.due = append(c.due, l)
			}
			i++
		}
	}
}

// itemLinks are the URLs of the item pages among links that this shard
// owns: those sortDue sorts.
func (r *run) itemLinks(links []Entry) []string {
	items := make([]string, 0, len(links))
	for _, l := range links {
		if l.Kind == KindItem && r.e.s.Shard.Owns(l.URL) {
			items = append(items, l.URL)
		}
	}
	return items
}

// memoChunk bounds how many dues sortDue reads in one transaction: a
// sitemap of 50,000 item links is read in chunks.
const memoChunk = 256

// itemDues reads what the memos of the item pages at urls say of when
// they are due, chunk by chunk; a page in a chunk that could not be read
// has none (it is fetched).
func (r *run) itemDues(urls []string) []PageDue {
	var out []PageDue
	for from := 0; from < len(urls) && r.e.d.Store != nil; from += memoChunk {
		chunk := urls[from:min(from+memoChunk, len(urls))]
		ds, err := r.e.d.Store.Dues(chunk)
		if err == nil && len(ds) != len(chunk) {
			err = fmt.Errorf("the store returned %d dues for %d pages", len(ds), len(chunk))
		}
		if err != nil {
			r.e.log.Warn("cannot read what the state keeps of some item pages; fetching them", "pages", len(chunk), "err", err)
			continue
		}
		if len(chunk) == len(urls) {
			return ds // one chunk: the store's answer is the whole
		}
		if out == nil {
			out = make([]PageDue, len(urls))
		}
		copy(out[from:], ds)
	}
	if out == nil {
		out = make([]PageDue, len(urls))
	}
	return out
}
