package pages

import (
	"fmt"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
)

// JSON pages are judged by whether they parse, not by their size or
// content type (APIs send JSON as text/plain too): a body that is not JSON
// — an HTML error page under a 200, a cut-off document — is a failure,
// like a stub page.

// notJSON is the failure of a page whose body is not JSON.
func notJSON(p crawl.Page, err error) error {
	return &crawl.PageError{Failure: true, Reason: fmt.Sprintf("HTTP %d with a body that is not JSON (%s): %v", p.Status, p.ContentType, err)}
}

// JSONListing reads JSON listing pages (listing.format = "json"): item
// links, cards and the next page's URL, through JMESPath.
type JSONListing struct {
	X        *extract.Extractor
	maxLinks int
}

// NewJSONListing returns a reader of JSON listing pages.
func NewJSONListing(x *extract.Extractor) *JSONListing {
	return &JSONListing{X: x, maxLinks: x.Spec().Listing.MaxLinks}
}

// Read reads a JSON listing page. A listing API's page is read one card
// at a time where its expressions allow (see extract's ReadListingJSON).
func (r *JSONListing) Read(p crawl.Page) (crawl.Yield, error) {
	l, err := r.X.ReadListingJSON(p.Body, p.URL)
	if err != nil {
		return crawl.Yield{}, notJSON(p, err)
	}
	return listingYield(l, r.maxLinks), nil
}

// JSONItem reads JSON item pages (item.format = "json").
type JSONItem struct {
	X *extract.Extractor
}

// Read reads a JSON item page: its item, or its rows. Only what the
// fields read of the page is decoded where that is known (see extract's
// ReadItemsJSON).
func (r JSONItem) Read(p crawl.Page) (crawl.Yield, error) {
	items, unusable, err := r.X.ReadItemsJSON(p.Body, p.URL)
	if err != nil {
		return crawl.Yield{}, notJSON(p, err)
	}
	return itemsYield(items, unusable), nil
}
