package crawl

import (
	"context"
	"strings"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/verdict"
)

// Inspection is what one URL came to when visited exactly as a run visits
// it — scope, robots.txt, retries, middleware, block rules, the body
// checks, extraction — with nothing stored (Engine.Inspect).
type Inspection struct {
	// URL is the URL as asked; AnsweredBy is the URL that answered, when
	// redirects led elsewhere.
	URL, AnsweredBy string
	Kind            Kind
	// Requests counts the exchanges, retries included.
	Requests int
	// Status, ContentType, Charset and Bytes describe the last response;
	// Status is 0 when none came.
	Status               int
	ContentType, Charset string
	Bytes                int
	// Class and Reason are the URL's result; Gap says whether it is a
	// coverage gap; Gaps are further gaps the page found (unusable cards,
	// links or keys over their limit).
	Class  verdict.Class
	Reason string
	Gap    bool
	Gaps   []verdict.Gap
	// Notes say what a selector matched but could not use.
	Notes []extract.Note
	// RobotsExcluded says robots.txt kept the visit from fetching; Blocked
	// is the reason a block rule or middleware gave, which stops a run.
	RobotsExcluded bool
	Blocked        string
	// ItemLinks, NextPages and Sitemaps are the in-scope links a listing
	// page, a sitemap or a robots.txt yielded; Items the items the page
	// yielded (cards, rows or the item page).
	ItemLinks, NextPages, Sitemaps []string
	Items                          []ItemVersion
	// Method is the method the page was requested with ("" is GET).
	Method string
	// Next are the listing requests the page leads to, as a run queues
	// them: NextPages with the method, and a body cursor where one goes.
	Next []NextRequest
}

// NextRequest is a listing request a page leads to.
type NextRequest struct {
	Method, URL string
	// Cursor is the JSON text of the cursor the request's body carries
	// (next_page with body); "" for none.
	Cursor string
}

// Inspect visits one URL as a listing or an item page, exactly as a run
// would, and says what it came to. It needs no Store and stores nothing;
// it ends early when ctx ends.
func (e *Engine) Inspect(ctx context.Context, rawURL string, kind Kind) Inspection {
	return e.InspectEntry(ctx, Entry{URL: rawURL, Kind: kind})
}

// InspectEntry is Inspect for a queue entry: a start URL of a pages chain
// (Start, Paged) leads to the chain's next page as in a run.
func (e *Engine) InspectEntry(ctx context.Context, entry Entry) Inspection {
	in := Inspection{URL: entry.URL, Kind: entry.Kind}
	norm, _, ok := e.canon(entry.URL)
	if !ok {
		in.Class, in.Gap, in.Reason = verdict.ClassNeutral, true, "not an absolute http or https URL"
		return in
	}
	entry.URL = norm
	if entry.Kind == KindListing && e.s.ListingRequest != nil {
		in.Method = e.s.ListingRequest.Method
	}
	r := &run{e: e, rc: &RunContext{ctx: ctx, runID: e.s.RunID}, budget: &budget{}}
	r.slots = newRequestSlots(1)
	r.ahead = newLookahead(r, r.slots)
	defer r.ahead.close()
	c := r.visit(ctx, Queued{Entry: entry}, e.s.Retries, false)
	in.URL, in.AnsweredBy, in.Requests = norm, c.answeredBy, c.requests
	in.Status, in.ContentType, in.Charset, in.Bytes = c.status, c.contentType, c.charset, c.bytes
	in.Class, in.Reason, in.Gap, in.Gaps, in.Notes = c.class, c.reason, c.gap, c.pageGaps, c.notes
	in.RobotsExcluded, in.Blocked, in.Items = c.robotsExcluded, c.blocked, c.items
	if c.fatal != "" {
		in.Class, in.Reason = verdict.ClassFailure, c.fatal
	}
	for _, l := range c.links {
		switch l.Kind {
		case KindItem:
			in.ItemLinks = append(in.ItemLinks, l.URL)
		case KindSitemap:
			in.Sitemaps = append(in.Sitemaps, l.URL)
		default:
			in.NextPages = append(in.NextPages, l.URL)
			next := NextRequest{Method: in.Method, URL: l.URL}
			if cursor, ok := bodyCursor(l.URL); ok {
				next.URL, next.Cursor = l.URL[:strings.IndexByte(l.URL, '#')], string(cursor)
			}
			in.Next = append(in.Next, next)
		}
	}
	return in
}
