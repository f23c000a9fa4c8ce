package crawl

import (
	"net/http"

	"github.com/databrew/databrew-stage/verdict"
)

// memo is the store's memo of a queued page, when it was made with the
// run's MemoTag, and whether the store has one at all; without a usable
// one (or when it cannot be read) the page is fetched whole. A page
// queued fresh has none (see FreshTeller).
func (r *run) memo(q Queued) (usable *PageMemo, exists bool) {
	if r.e.d.Store == nil || q.fresh {
		return nil, false
	}
	m, err := r.e.d.Store.Memo(q.URL)
	if err != nil {
		r.e.log.Warn("cannot read what the state keeps of a page; fetching it whole", "url", q.URL, "err", err)
		return nil, false
	}
	return r.usable(m), m != nil
}

// usable is m when it was made with the run's MemoTag.
func (r *run) usable(m *PageMemo) *PageMemo {
	if m == nil || m.Tag != r.e.s.MemoTag {
		return nil
	}
	return m
}

// conditionalHeader is hdr with the validators of memo: the site answers
// 304 Not Modified when the page is as the memo has it.
func conditionalHeader(hdr http.Header, m *PageMemo) http.Header {
	h := make(http.Header, len(hdr)+2)
	for k, v := range hdr {
		h[k] = v
	}
	if m.ETag != "" {
		h.Set("If-None-Match", m.ETag)
	}
	if m.LastModified != "" {
		h.Set("If-Modified-Since", m.LastModified)
	}
	return h
}

// replay yields what a page that answered 304 yielded when the memo was
// made: its links again (those still in scope) and its items, which the
// store counts unchanged and seen.
func (r *run) replay(q Queued, m *PageMemo, c *completion) {
	c.notModified = true
	c.links = make([]Entry, 0, len(m.Links))
	itemLinks := 0
	for _, l := range m.Links {
		if r.scoped.allows(r.e.scope, l.URL) {
			c.links = append(c.links, l)
			if l.Kind == KindItem {
				itemLinks++
			}
		}
	}
	c.touched = m.Items
	c.usableItems = len(m.Items)
	if q.Kind == KindItem {
		return
	}
	c.fetchedStart = q.Start
	c.yielded = itemLinks > 0 || len(m.Items) > 0
}

// remember decides what the store keeps of the page for its next
// request: a memo when the site sent validators with a page read whole,
// without a gap, or under a revisit policy whatever the headers; otherwise
// nothing (had says a memo exists to remove). A 304 keeps the memo as it
// is, rescheduled under a revisit policy; a failure leaves it to the
// store. A page of a pages chain that was read always leaves a memo of
// what it held (see followChain), without validators when it may not be
// replayed.
func (r *run) remember(c *completion, resp *Response, old *PageMemo, had bool) {
	revisit := r.e.s.Revisit != nil && c.q.Kind == KindItem
	switch {
	case c.class == verdict.ClassFailure || c.class == 0:
		return
	case c.notModified:
		if revisit {
			m := *old
			r.reschedule(&m, old, false)
			m.Card = c.q.Card
			c.memo = &m
		}
		return
	case resp == nil || c.class != verdict.ClassOK || c.gap || len(c.pageGaps) > 0 || c.unusableItems > 0:
		r.rememberChain(c, had)
		return
	}
	etag, lastModified := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if c.replayless || etag == "" && lastModified == "" && r.e.s.Revisit == nil {
		r.rememberChain(c, had)
		return
	}
	items := make([]ItemRef, len(c.items))
	for i, it := range c.items {
		items[i] = ItemRef{Key: it.Key, URL: it.URL, Hash: it.Hash}
	}
	m := &PageMemo{Tag: r.e.s.MemoTag, ETag: etag, LastModified: lastModified, Links: c.links, Items: items, Chain: c.chain}
	if revisit {
		r.reschedule(m, old, old != nil && itemsChanged(old.Items, items))
		m.Card = c.q.Card
	}
	c.memo = m
}

// rememberChain keeps a memo of what a chain page held and nothing else,
// so no request is made conditional on it; a page of no chain keeps none.
func (r *run) rememberChain(c *completion, had bool) {
	if c.chain == nil {
		c.forgetMemo = had
		return
	}
	c.memo = &PageMemo{Tag: r.e.s.MemoTag, Chain: c.chain}
}
