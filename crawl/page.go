package crawl

import (
	"bytes"
	"fmt"
	"time"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/verdict"
)

// page processes a usable response: block rules, then links and items.
// It may turn the result into an unusable page or a block.
func (r *run) page(q Queued, resp *Response, c *completion) {
	e := r.e
	for _, t := range e.blockTexts {
		if bytes.Contains(resp.Body, t) {
			c.blocked = fmt.Sprintf("block rule: %s contains %q", q.URL, t)
			return
		}
	}
	doc, err := e.d.Extractor.Parse(resp.Body)
	if err != nil {
		c.class, c.gap, c.reason = verdict.ClassNeutral, true, fmt.Sprintf("cannot parse HTML: %v", err)
		return
	}
	for i, sel := range e.blockSels {
		for _, n := range doc.Nodes {
			if sel.MatchFirst(n) != nil {
				c.blocked = fmt.Sprintf("block rule: %s matches selector %q", q.URL, e.s.Block.Selectors[i])
				return
			}
		}
	}
	base := resp.FinalURL
	if base == nil {
		_, base, _ = Normalize(q.URL)
	}
	now := e.d.Clock.Now().UTC()
	if q.Kind == KindListing {
		ls := e.d.Extractor.Listing(doc, base)
		c.fetchedStart = q.Start
		c.links = make([]Entry, 0, len(ls.ItemLinks)+len(ls.NextPages))
		for _, l := range ls.ItemLinks {
			c.links = r.appendLink(c.links, l, KindItem)
		}
		items := len(c.links)
		for _, l := range ls.NextPages {
			c.links = r.appendLink(c.links, l, KindListing)
		}
		for _, it := range ls.Items {
			c.items = append(c.items, r.version(it, now))
		}
		for _, u := range ls.Unusable {
			c.cardGaps = append(c.cardGaps, verdict.Gap{URL: u.URL, Reason: u.Err.Error()})
		}
		c.yielded = items > 0 || len(ls.Items) > 0
		return
	}
	it, err := e.d.Extractor.Item(doc, base)
	if err != nil {
		c.class, c.gap, c.reason = verdict.ClassNeutral, true, err.Error()
		return
	}
	c.items = append(c.items, r.version(it, now))
}

func (r *run) appendLink(links []Entry, raw string, kind Kind) []Entry {
	norm, u, ok := Normalize(raw)
	if !ok || !r.e.scope.Allows(u) {
		return links
	}
	return append(links, Entry{URL: norm, Kind: kind})
}

func (r *run) version(it extract.Item, now time.Time) ItemVersion {
	return ItemVersion{Key: it.Key, URL: it.URL, Hash: it.Hash(), Values: it.Values, FetchedAt: now, RunID: r.e.s.RunID}
}
