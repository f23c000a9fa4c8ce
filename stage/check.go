package stage

import (
	"context"
	"errors"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/verdict"
)

// CheckReport is what Check found: the pages that lead to item pages —
// the first start URL read as a listing page, or the robots.txt and
// sitemaps a sitemaps config starts from — and an item page, each visited
// exactly as a run visits it.
type CheckReport struct {
	// Listings are the listing pages, robots.txt files and sitemaps
	// visited, in order; the last one yielded the item link checked.
	Listings []crawl.Inspection
	// Item is nil when there was no item page to visit: neither an item
	// URL was given nor did a listing yield an item link.
	Item *crawl.Inspection
	// Fields are the item fields in column order, to read Items' values.
	Fields []extract.FieldSpec
	// Rendered is the config's [render] table: the page kinds check
	// loaded in the browser, as a run does; nil when none.
	Rendered *config.Render
	// Render is what the browser did, and Subresources the requests the
	// rendered pages made besides their documents, for a config with
	// [render].
	Render       *verdict.Render
	Subresources int
}

// maxCheckHops bounds the robots.txt and sitemap indexes Check follows to
// reach a sitemap that lists item pages.
const maxCheckHops = 4

// Check is a run in miniature on the same wiring — scope, robots.txt,
// retries, block rules, body checks, extraction — that stores and writes
// nothing: it visits the first start URL as a listing page (or, for a
// sitemaps config, the first robots.txt or sitemap, following indexes to a
// sitemap of item pages), then itemURL, or when it is empty the first item
// link found, as an item page. Its error is only for an engine that could
// not be built.
func Check(ctx context.Context, cfg config.Config, opts Options, itemURL string) (CheckReport, error) {
	listings, others := starts(cfg)
	var first crawl.Entry
	switch {
	case len(listings) > 0:
		first = crawl.Entry{URL: listings[0], Kind: crawl.KindListing, Start: true, Paged: cfg.Sources.Pages != nil}
	case len(others) > 0:
		first = others[0]
	default:
		return CheckReport{}, errors.New("the config has no start URL")
	}
	x, err := extract.Compile(cfg.Extract)
	if err != nil {
		return CheckReport{}, err
	}
	eng, w, err := newEngine(cfg, opts, nil, "check", clockOf(opts))
	if err != nil {
		return CheckReport{}, err
	}
	defer w.close()
	rep := CheckReport{Fields: x.Fields(), Rendered: cfg.Render}
	next := first
	for hop := 0; hop < maxCheckHops && ctx.Err() == nil; hop++ {
		in := eng.InspectEntry(ctx, next)
		rep.Listings = append(rep.Listings, in)
		if len(in.ItemLinks) > 0 || len(in.Items) > 0 || len(in.Sitemaps) == 0 {
			break
		}
		next = crawl.Entry{URL: in.Sitemaps[0], Kind: crawl.KindSitemap}
	}
	last := rep.Listings[len(rep.Listings)-1]
	if itemURL == "" && len(last.ItemLinks) > 0 {
		itemURL = last.ItemLinks[0]
	}
	if itemURL != "" && ctx.Err() == nil {
		item := eng.Inspect(ctx, itemURL, crawl.KindItem)
		rep.Item = &item
	}
	if w.renderer != nil {
		facts := w.renderer.Facts()
		rep.Render, rep.Subresources = &facts, w.renderer.Subresources()
	}
	return rep, nil
}
