package crawl

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/verdict"
)

// read applies the block texts to a 2xx page and gives it to the reader
// of its kind. A page the reader cannot read turns the judgment into a
// failure (not a document of its format at all) or an unusable page.
func (r *run) read(q Queued, resp *Response, j judgment) (Yield, judgment) {
	for _, t := range r.e.blockTexts {
		if bytes.Contains(resp.Body, t) {
			j.blocked = fmt.Sprintf("block rule: %s contains %q", q.URL, t)
			return Yield{}, j
		}
	}
	var base *url.URL
	if resp.FinalURL != nil {
		b := *resp.FinalURL
		r.e.s.IgnoreParams.Strip(&b)
		base = &b
	} else {
		_, base, _ = r.e.canon(q.URL)
	}
	reader := r.e.d.Readers[q.Kind]
	if reader == nil {
		j.class, j.unusable, j.reason = verdict.ClassNeutral, true, fmt.Sprintf("no reader for %s pages", q.Kind)
		return Yield{}, j
	}
	y, err := reader.Read(Page{URL: base, Status: resp.Status, ContentType: resp.Header.Get("Content-Type"), Body: resp.Body})
	if err == nil && q.Kind == KindListing && r.e.s.LinkHeader {
		if target, ok := nextLink(resp.Header); ok {
			if u, perr := base.Parse(target); perr == nil {
				y.Links = append(y.Links, Link{URL: u.String(), Kind: KindListing})
			}
		}
	}
	var pe *PageError
	switch {
	case errors.As(err, &pe) && pe.Failure:
		j.class, j.reason = verdict.ClassFailure, pe.Reason
	case err != nil:
		j.class, j.unusable, j.reason = verdict.ClassNeutral, true, err.Error()
	case y.Blocked != "":
		j.blocked = fmt.Sprintf("block rule: %s %s", q.URL, y.Blocked)
	}
	return y, j
}

// yield takes what a usable page holds: its links and items, and the gaps
// it leaves. A listing page that yields nothing, or a page that holds more
// than its reader takes, is a coverage gap: the traversal did not see
// everything it lists; an item page that yields no item is one too, and a
// page of a pages chain follows the chain's rules (see followChain).
// Listings, sitemaps and robots.txt files are what the outcome rules call
// listing pages.
func (r *run) yield(q Queued, y Yield, memo *PageMemo, c *completion) {
	now := r.e.d.Clock.Now().UTC()
	c.links = make([]Entry, 0, len(y.Links))
	itemLinks := 0
	var outside outOfScope
	for _, l := range y.Links {
		if r.appendLink(c, l, &outside) && l.Kind == KindItem {
			itemLinks++
		}
	}
	c.pageGaps = append(c.pageGaps, outside.gaps(q, r.e.s.AllowedDomains)...)
	if y.Cursor != "" && q.Kind == KindListing && r.e.s.NextCursor != nil {
		r.followCursor(q, y.Cursor, c)
	}
	stored := 0
	for _, it := range y.Items {
		if len(it.Key) > MaxKeyBytes {
			c.pageGaps = append(c.pageGaps, verdict.Gap{URL: shortURL(it.URL), Reason: tooLong("item key", len(it.Key), MaxKeyBytes)})
			continue
		}
		c.items = append(c.items, r.version(it, now))
		stored++
	}
	c.pageGaps = append(c.pageGaps, y.Unusable...)
	c.usableItems, c.unusableItems = stored, len(y.Unusable)
	c.notes, c.reports = y.Notes, y.Reports
	if q.Kind == KindItem {
		if stored == 0 {
			c.unusableItems = max(c.unusableItems, 1)
			// The page's one item (or all its rows) could not be used: the
			// page is unusable, for the last reason it gave.
			reason := "item page yielded no item"
			if n := len(c.pageGaps); n > 0 {
				reason = c.pageGaps[n-1].Reason
				c.pageGaps = c.pageGaps[:n-1]
			}
			c.class, c.gap, c.reason = verdict.ClassNeutral, true, reason
		}
		return
	}
	c.fetchedStart = q.Start
	c.yielded = itemLinks > 0 || stored > 0
	if q.Kind == KindSitemap {
		r.judgeSitemap(memo, len(y.Links), c)
	}
	held := itemLinks + len(y.Items) + len(y.Unusable)
	if q.Paged && r.followChain(q, y, memo, held, c) {
		return
	}
	switch {
	case y.Truncated != "":
		c.gap, c.reason = true, y.Truncated
	case q.Kind == KindListing && len(c.links) == 0 && held == 0:
		c.gap, c.reason = true, "listing page yielded no item, item link or next page"
	}
}

// appendLink adds a link the page yielded when it is in scope and reports
// whether it did; a link longer than MaxURLBytes is a coverage gap
// instead, and one out of scope goes to outside.
func (r *run) appendLink(c *completion, l Link, outside *outOfScope) bool {
	norm, u, ok := r.e.canon(l.URL)
	switch {
	case !ok || !r.e.scope.Allows(u):
		outside.add(l, ok)
		return false
	case len(norm) > MaxURLBytes:
		c.pageGaps = append(c.pageGaps, verdict.Gap{URL: shortURL(norm), Reason: tooLong(l.Kind.String()+" link", len(norm), MaxURLBytes)})
		return false
	}
	c.links = append(c.links, Entry{URL: norm, Kind: l.Kind, Card: l.Card})
	return true
}

// followCursor queues the listing request a page's cursor names.
func (r *run) followCursor(q Queued, cursor string, c *completion) {
	next, err := r.e.s.NextCursor.nextCursorEntry(q, cursor)
	if err != nil {
		c.pageGaps = append(c.pageGaps, verdict.Gap{URL: shortURL(q.URL), Reason: fmt.Sprintf("next_page cursor %s: %v", shortURL(cursor), err)})
		return
	}
	if len(r.e.s.NextCursor.BodyPath) == 0 {
		norm, _, ok := r.e.canon(next.URL)
		if !ok {
			return
		}
		next.URL = norm
	}
	c.links = append(c.links, next)
}

func (r *run) version(it extract.Item, now time.Time) ItemVersion {
	return ItemVersion{Key: it.Key, URL: r.e.s.IgnoreParams.StripString(it.URL), Hash: it.Hash(), Values: it.Values, FetchedAt: now, RunID: r.e.s.RunID, Why: it.Why}
}
