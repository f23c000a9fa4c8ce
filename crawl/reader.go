package crawl

import (
	"net/url"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/verdict"
)

// PageReader reads what a fetched page of one kind holds, in one format:
// an HTML listing, a JSON API page, a sitemap. The engine picks the reader
// for a URL's kind (Deps.Readers) and knows nothing of formats, so a new
// format is a new reader, not a new branch in the engine. Package pages
// holds the readers a config can ask for.
type PageReader interface {
	// Read reads a page that answered 2xx. An error is a *PageError: a
	// page that is not a document of the reader's format at all, or one it
	// cannot use.
	Read(p Page) (Yield, error)
}

// Page is a fetched page to read.
type Page struct {
	// URL is where the page came from, after redirects: relative links
	// resolve against it (or against a <base> the page names).
	URL *url.URL
	// Status is the response's status, a 2xx.
	Status int
	// ContentType is the response's Content-Type.
	ContentType string
	// Body is the body, decoded to UTF-8 when it is text.
	Body []byte
}

// Yield is what a page holds.
type Yield struct {
	// Links are the URLs the page leads to, each with the kind of page it
	// is; the engine keeps those in scope and within MaxURLBytes.
	Links []Link
	// Items are the items the page holds: its cards, its rows, or the page
	// itself.
	Items []extract.Item
	// Unusable are items the page holds that could not be read: each is a
	// coverage gap.
	Unusable []verdict.Gap
	// Truncated, when set, says the page held more than the reader takes
	// (max_links_per_page): the page is a coverage gap with this reason.
	Truncated string
	// Blocked, when set, says the page marks the crawler as blocked (a
	// [block] selector): the run stops as blocked with this reason.
	Blocked string
	// Notes say what a listing selector matched but could not use (a
	// next_page matching elements without an href), or that it found
	// nothing: a run warns of a selector that yielded nothing on every
	// listing page it read.
	Notes []extract.Note
	// End says whether a listing page that yields nothing shows that it
	// is the end of a pages chain (see Ending).
	End Ending
	// NotEnd says, when End is EndNotShown, why the page does not show it
	// is an end (what the items expression yielded instead of an empty
	// array, say).
	NotEnd string
	// Reports say how reading the fields of each item the page held went,
	// usable or not: the type errors and the fields that found nothing.
	Reports []ItemReport
	// Cursor is the JSON text of the cursor a JSON listing page names for
	// the next listing request (next_page with param or body; see
	// Settings.NextCursor); "" when it names none, which ends the chain.
	Cursor string
}

// Ending is what a listing page says of itself as the possible end of a
// pages chain, when it yields nothing.
type Ending uint8

// The endings.
const (
	// EndUnknown: the page cannot show it (an HTML page when the config
	// names no end selector); the engine judges by what the page at that
	// place of the chain held in the previous traversal.
	EndUnknown Ending = iota
	// EndShown: the page shows it is an end (a JSON listing whose items
	// or item links are an empty array, an HTML page the end selector
	// matches).
	EndShown
	// EndNotShown: the page could have shown it and did not (null, a
	// missing member or a value of another shape where a JSON listing's
	// array should be; an HTML page the end selector does not match): a
	// page that yields nothing so is a coverage gap.
	EndNotShown
)

// ItemReport is how reading one item's fields went, and the item's URL.
type ItemReport struct {
	URL string
	extract.FieldReport
}

// Link is a URL a page leads to.
type Link struct {
	URL  string
	Kind Kind
	// Card is a digest of the card around an item link on its listing
	// page, when the config names one ([revisit] card); "" otherwise.
	Card string
}

// PageError is a page a reader could not read.
type PageError struct {
	// Failure is true for a page that is not a document of its format at
	// all — an HTML stub shorter than min_body_bytes, JSON or XML that does
	// not parse —: trouble with the site, counted and retried as a failure
	// like a 5xx. Otherwise the page is unusable: neutral, and a coverage
	// gap.
	Failure bool
	Reason  string
}

// Error says why the page could not be read.
func (e *PageError) Error() string { return e.Reason }
