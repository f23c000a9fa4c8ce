package crawl

import (
	"bytes"
	"fmt"
	"net/url"
	"time"

	"github.com/PuerkitoBio/goquery"

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
		r.listing(q, doc, base, now, c)
		return
	}
	it, err := e.d.Extractor.Item(doc, base)
	if err != nil {
		c.class, c.gap, c.reason = verdict.ClassNeutral, true, err.Error()
		return
	}
	if len(it.Key) > MaxKeyBytes {
		c.class, c.gap, c.reason = verdict.ClassNeutral, true, tooLong("item key", len(it.Key), MaxKeyBytes)
		return
	}
	c.items = append(c.items, r.version(it, now))
}

// listing reads a listing page's links and cards. A page that yields
// nothing, or more than max_links_per_page, is a coverage gap: the
// traversal did not see everything it lists.
func (r *run) listing(q Queued, doc *goquery.Document, base *url.URL, now time.Time, c *completion) {
	ls := r.e.d.Extractor.Listing(doc, base)
	c.fetchedStart = q.Start
	c.links = make([]Entry, 0, len(ls.ItemLinks)+len(ls.NextPages))
	for _, l := range ls.ItemLinks {
		c.links = r.appendLink(c, l, KindItem)
	}
	items := len(c.links)
	for _, l := range ls.NextPages {
		c.links = r.appendLink(c, l, KindListing)
	}
	stored := 0
	for _, it := range ls.Items {
		if len(it.Key) > MaxKeyBytes {
			c.pageGaps = append(c.pageGaps, verdict.Gap{URL: shortURL(it.URL), Reason: tooLong("item key", len(it.Key), MaxKeyBytes)})
			continue
		}
		c.items = append(c.items, r.version(it, now))
		stored++
	}
	for _, u := range ls.Unusable {
		c.pageGaps = append(c.pageGaps, verdict.Gap{URL: u.URL, Reason: u.Err.Error()})
	}
	c.yielded = items > 0 || stored > 0
	switch {
	case ls.Dropped > 0:
		c.gap, c.reason = true, fmt.Sprintf("listing page holds %d more links or cards than max_links_per_page (%d): they were not followed", ls.Dropped, r.e.d.Extractor.Spec().Listing.MaxLinks)
	case len(c.links) == 0 && len(ls.Items) == 0 && len(ls.Unusable) == 0:
		c.gap, c.reason = true, "listing page yielded no item, item link or next page"
	}
}

// appendLink adds a link the page yielded when it is in scope; a link
// longer than MaxURLBytes is a coverage gap instead.
func (r *run) appendLink(c *completion, raw string, kind Kind) []Entry {
	norm, u, ok := Normalize(raw)
	switch {
	case !ok || !r.e.scope.Allows(u):
		return c.links
	case len(norm) > MaxURLBytes:
		c.pageGaps = append(c.pageGaps, verdict.Gap{URL: shortURL(norm), Reason: tooLong(kind.String()+" link", len(norm), MaxURLBytes)})
		return c.links
	}
	return append(c.links, Entry{URL: norm, Kind: kind})
}

func (r *run) version(it extract.Item, now time.Time) ItemVersion {
	return ItemVersion{Key: it.Key, URL: it.URL, Hash: it.Hash(), Values: it.Values, FetchedAt: now, RunID: r.e.s.RunID}
}
