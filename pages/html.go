package pages

import (
	"fmt"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/verdict"
)

// HTML is what HTML pages are judged by before they are read.
type HTML struct {
	// MinBodyBytes is min_body_bytes: a shorter body is a stub page, a
	// failure.
	MinBodyBytes int64
	// Block are the [block] selectors: a page matching one says the
	// crawler is blocked.
	Block []string
	block []cascadia.Selector
}

// compile compiles the block selectors.
func (h *HTML) compile() error {
	h.block = h.block[:0]
	for _, sel := range h.Block {
		m, err := cascadia.Compile(sel)
		if err != nil {
			return fmt.Errorf("block selector %q: %w", sel, err)
		}
		h.block = append(h.block, m)
	}
	return nil
}

// read judges an HTML page, parses it and, unless the page is blocked,
// reads it with fn: a body shorter than min_body_bytes is a stub (a
// failure), a body that is not HTML an unusable page. blocked names the
// block selector the page matches. The document lives as long as fn
// runs: its nodes go to the next page after (extract.ParseTransient), so
// fn keeps only what extract returns of it.
func (h *HTML) read(x *extract.Extractor, p crawl.Page, fn func(doc *goquery.Document) crawl.Yield) (crawl.Yield, error) {
	if int64(len(p.Body)) < h.MinBodyBytes {
		return crawl.Yield{}, &crawl.PageError{Failure: true, Reason: fmt.Sprintf("HTTP %d with a %d-byte body (min_body_bytes %d)", p.Status, len(p.Body), h.MinBodyBytes)}
	}
	if !isHTML(p.ContentType) {
		return crawl.Yield{}, &crawl.PageError{Reason: fmt.Sprintf("not an HTML page (%s)", p.ContentType)}
	}
	doc, release, err := x.ParseTransient(p.Body)
	if err != nil {
		return crawl.Yield{}, &crawl.PageError{Reason: fmt.Sprintf("cannot parse HTML: %v", err)}
	}
	defer release()
	for i, sel := range h.block {
		for _, n := range doc.Nodes {
			if sel.MatchFirst(n) != nil {
				return crawl.Yield{Blocked: fmt.Sprintf("matches selector %q", h.Block[i])}, nil
			}
		}
	}
	return fn(doc), nil
}

// isHTML reports whether a Content-Type is HTML: empty, text/html or
// application/xhtml+xml (case-insensitive, parameters ignored).
func isHTML(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(mt)
	return mt == "" || strings.EqualFold(mt, "text/html") || strings.EqualFold(mt, "application/xhtml+xml")
}

// HTMLListing reads HTML listing pages: their item links, next-page links
// and cards.
type HTMLListing struct {
	X *extract.Extractor
	HTML
	maxLinks int
}

// NewHTMLListing returns a reader of HTML listing pages.
func NewHTMLListing(x *extract.Extractor, h HTML) (*HTMLListing, error) {
	r := &HTMLListing{X: x, HTML: h, maxLinks: x.Spec().Listing.MaxLinks}
	return r, r.compile()
}

// Read reads a listing page.
func (r *HTMLListing) Read(p crawl.Page) (crawl.Yield, error) {
	return r.read(r.X, p, func(doc *goquery.Document) crawl.Yield {
		return listingYield(r.X.Listing(doc, p.URL), r.maxLinks)
	})
}

// listingYield turns what extract read of a listing page into its yield.
func listingYield(ls extract.Listing, maxLinks int) crawl.Yield {
	y := crawl.Yield{Links: make([]crawl.Link, 0, len(ls.ItemLinks)+len(ls.NextPages)), Items: ls.Items, Notes: ls.Notes}
	for i, l := range ls.ItemLinks {
		link := crawl.Link{URL: l, Kind: crawl.KindItem}
		if i < len(ls.ItemCards) {
			link.Card = ls.ItemCards[i]
		}
		y.Links = append(y.Links, link)
	}
	for _, l := range ls.NextPages {
		y.Links = append(y.Links, crawl.Link{URL: l, Kind: crawl.KindListing})
	}
	y.Unusable = gaps(ls.Unusable)
	y.Reports = reports(ls.Items, ls.Unusable)
	y.Cursor = ls.Cursor
	switch {
	case ls.End:
		y.End = crawl.EndShown
	case ls.NotEnd != "":
		y.End, y.NotEnd = crawl.EndNotShown, ls.NotEnd
	}
	if ls.Dropped > 0 {
		y.Truncated = fmt.Sprintf("listing page holds %d more links or cards than max_links_per_page (%d): they were not followed", ls.Dropped, maxLinks)
	}
	return y
}

// HTMLItem reads HTML item pages.
type HTMLItem struct {
	X *extract.Extractor
	HTML
}

// NewHTMLItem returns a reader of HTML item pages.
func NewHTMLItem(x *extract.Extractor, h HTML) (*HTMLItem, error) {
	r := &HTMLItem{X: x, HTML: h}
	return r, r.compile()
}

// Read reads an item page: its item, or its rows (item.rows), and those
// it could not use.
func (r *HTMLItem) Read(p crawl.Page) (crawl.Yield, error) {
	return r.read(r.X, p, func(doc *goquery.Document) crawl.Yield {
		return itemsYield(r.X.Items(doc, p.URL))
	})
}

// itemsYield is the yield of an item page's items.
func itemsYield(items []extract.Item, unusable []extract.Unusable) crawl.Yield {
	return crawl.Yield{Items: items, Unusable: gaps(unusable), Reports: reports(items, unusable)}
}

// reports are the field reports of a page's items, usable or not; nil
// when every field of every item found a value that parsed.
func reports(items []extract.Item, unusable []extract.Unusable) []crawl.ItemReport {
	var out []crawl.ItemReport
	for _, it := range items {
		if it.Why != nil || it.Bad != nil {
			out = append(out, crawl.ItemReport{URL: it.URL, FieldReport: it.FieldReport})
		}
	}
	for _, u := range unusable {
		if u.Report.Why != nil || u.Report.Bad != nil {
			out = append(out, crawl.ItemReport{URL: u.URL, FieldReport: u.Report})
		}
	}
	return out
}

// gaps are the coverage gaps of items that could not be read.
func gaps(unusable []extract.Unusable) []verdict.Gap {
	var out []verdict.Gap
	for _, u := range unusable {
		out = append(out, verdict.Gap{URL: u.URL, Reason: u.Err.Error()})
	}
	return out
}
