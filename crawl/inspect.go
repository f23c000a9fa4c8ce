package crawl

import (
	"context"

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
}

// Inspect visits one URL as a listing or an item page, exactly as a run
// would, and says what it came to. It needs no Store and stores nothing;
// it ends early when ctx ends.
func (e *Engine) Inspect(ctx context.Context, rawURL string, kind Kind) Inspection {
	in := Inspection{URL: rawURL, Kind: kind}
	norm, _, ok := Normalize(rawURL)
	if !ok {
		in.Class, in.Gap, in.Reason = verdict.ClassNeutral, true, "not an absolute http or https URL"
		return in
	}
	r := &run{e: e, rc: &RunContext{ctx: ctx, runID: e.s.RunID}, budget: &budget{}}
	c := r.visit(ctx, Queued{Entry: Entry{URL: norm, Kind: kind}}, e.s.Retries)
	in.URL, in.AnsweredBy, in.Requests = norm, c.answeredBy, c.requests
	in.Status, in.ContentType, in.Charset, in.Bytes = c.status, c.contentType, c.charset, c.bytes
	in.Class, in.Reason, in.Gap, in.Gaps, in.Notes = c.class, c.reason, c.gap, c.pageGaps, c.notes
	in.RobotsExcluded, in.Blocked, in.Items = c.robotsExcluded, c.blocked, c.items
	for _, l := range c.links {
		switch l.Kind {
		case KindItem:
			in.ItemLinks = append(in.ItemLinks, l.URL)
		case KindSitemap:
			in.Sitemaps = append(in.Sitemaps, l.URL)
		default:
			in.NextPages = append(in.NextPages, l.URL)
		}
	}
	return in
}
