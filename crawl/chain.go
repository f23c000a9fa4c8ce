package crawl

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strconv"

	"github.com/databrew/databrew-stage/verdict"
)

// A pages chain is parameter pagination (Settings.PageParam): each start
// URL is the first page, and a page that holds items is followed by the
// same URL with the parameter one higher. The chain ends on the first page
// that does not go on, and how it ends decides whether the traversal saw
// everything the site lists: a page that yields nothing is the end only
// when it shows it is one; otherwise it may be a page that failed (a bot
// wall, an error object under a 200) whose items are still there, so it is
// a coverage gap and nothing is removed on its account. Tails that never
// end — a site that repeats its last page, or sends every high number back
// to page 1 — end too, so a traversal always completes and the next one
// starts again from the start URLs.

// followChain applies the rules of a pages chain to a page of one that
// was read whole, after its links and items are in c: it queues the next
// page, or ends the chain, as a neutral end or as a coverage gap. It
// reports whether it decided the page's class and gap; otherwise the
// page is judged as any listing page.
func (r *run) followChain(q Queued, y Yield, memo *PageMemo, held int, c *completion) bool {
	param := r.e.s.PageParam
	if !q.Start && c.answeredBy != "" && earlierInChain(q.URL, c.answeredBy, param) {
		r.endChain(c, fmt.Sprintf("page %s redirects to a page the chain already read: the end of the chain", pageNumber(q.URL, param)))
		return true
	}
	if held > 0 {
		digest := yieldDigest(c)
		if !q.Start && q.Prev != "" && digest == q.Prev {
			r.endChain(c, fmt.Sprintf("page %s yields what the page before it did: the end of the chain", pageNumber(q.URL, param)))
			return true
		}
		c.chain = &ChainMark{Held: held}
		if next, ok := NextPageNumber(q.URL, param, r.e.s.PageStep); ok {
			c.links = append(c.links, Entry{URL: next, Kind: KindListing, Paged: true, Prev: digest})
		}
		return false
	}
	if q.Start {
		// A first page that yields nothing is a gap, as any start is.
		return false
	}
	c.chain = &ChainMark{}
	page := pageNumber(q.URL, param)
	switch {
	case y.End == EndShown:
		c.class, c.reason = verdict.ClassNeutral, fmt.Sprintf("page %s shows the end of the chain", page)
	case y.End == EndNotShown:
		c.gap, c.reason = true, fmt.Sprintf("page %s yields nothing and does not show the end of the chain: %s", page, y.NotEnd)
	case memo == nil || memo.Chain == nil:
		c.gap, c.reason = true, fmt.Sprintf("page %s yields nothing, and no earlier traversal read it: it may be the end or a page that failed (set [listing] end to tell them apart)", page)
	case memo.Chain.Held > 0:
		c.gap, c.reason = true, fmt.Sprintf("page %s yields nothing; it held %d items in the last traversal", page, memo.Chain.Held)
	default:
		c.class, c.reason = verdict.ClassNeutral, fmt.Sprintf("page %s yields nothing, as in the last traversal: the end of the chain", page)
	}
	return true
}

// endChain ends a chain on a page that yields nothing new: a neutral end,
// and whatever the page held is dropped (it is what the chain already
// read).
func (r *run) endChain(c *completion, reason string) {
	c.class, c.reason = verdict.ClassNeutral, reason
	c.links, c.items, c.pageGaps = nil, nil, nil
	c.usableItems, c.unusableItems, c.yielded = 0, 0, false
	c.chain = &ChainMark{}
}

// yieldDigest digests what a chain page yielded — its items' keys and its
// item links, in any order — so that the next page can tell whether it
// repeats it.
func yieldDigest(c *completion) string {
	parts := make([]string, 0, len(c.items)+len(c.links))
	for _, it := range c.items {
		parts = append(parts, "k"+it.Key)
	}
	for _, l := range c.links {
		if l.Kind == KindItem {
			parts = append(parts, "l"+l.URL)
		}
	}
	slices.Sort(parts)
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// endOfPages reports whether a listing page that yields nothing, or is
// gone, may be the end of parameter pagination rather than a hole: a paged
// page after the first.
func endOfPages(e Entry) bool { return e.Paged && !e.Start }

// endsChain reports whether an answer of this status may end a pages
// chain after its first page: 400, 404, 410 or 416, what sites answer for
// a page number past the last.
func endsChain(status int) bool {
	return status == 400 || status == 404 || status == 410 || status == 416
}

// earlierInChain reports whether final, where a redirect from the chain
// page at raw led, is a page of the same chain the traversal already read:
// the same URL but for param, with a lower number or none (the chain's
// first page).
func earlierInChain(raw, final, param string) bool {
	u, err1 := url.Parse(raw)
	f, err2 := url.Parse(final)
	if err1 != nil || err2 != nil {
		return false
	}
	uq, fq := u.Query(), f.Query()
	n, err := strconv.Atoi(uq.Get(param))
	if err != nil {
		return false
	}
	m, hasM := 0, fq.Has(param)
	if hasM {
		if m, err = strconv.Atoi(fq.Get(param)); err != nil {
			return false
		}
	}
	uq.Del(param)
	fq.Del(param)
	same := u.Scheme == f.Scheme && u.Host == f.Host && u.Path == f.Path && uq.Encode() == fq.Encode()
	return same && (!hasM || m < n)
}

// pageNumber is the value of param in raw, for messages.
func pageNumber(raw, param string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if v := u.Query().Get(param); v != "" {
		return v
	}
	return raw
}

// NextPageNumber is the URL of the page after raw in parameter pagination:
// the same URL with param step higher (from 0 when raw lacks it; a step
// below 1 is 1).
func NextPageNumber(raw, param string, step int) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || param == "" {
		return "", false
	}
	q := u.Query()
	n := 0
	if v := q.Get(param); v != "" {
		if n, err = strconv.Atoi(v); err != nil {
			return "", false
		}
	}
	return SetPageNumber(u, param, n+max(step, 1)), true
}

// SetPageNumber is u with param set to n, the other query parameters in
// their place and spelling.
func SetPageNumber(u *url.URL, param string, n int) string {
	return withParam(u, param, strconv.Itoa(n))
}
