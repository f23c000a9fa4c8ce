package stage

import (
	"context"
	"errors"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
)

// CheckReport is what Check found: the first start URL visited as a
// listing page, and an item page visited as one, each exactly as a run
// visits it.
type CheckReport struct {
	Listing crawl.Inspection
	// Item is nil when there was no item page to visit: neither an item
	// URL was given nor did the listing yield an item link.
	Item *crawl.Inspection
	// Fields are the item fields in column order, to read Items' values.
	Fields []extract.FieldSpec
}

// Check is a run in miniature on the same wiring — scope, robots.txt,
// retries, block rules, body checks, extraction — that stores and writes
// nothing: it visits the first start URL as a listing page, then itemURL,
// or when it is empty the first item link the listing yielded, as an item
// page. Its error is only for an engine that could not be built.
func Check(ctx context.Context, cfg config.Config, opts Options, itemURL string) (CheckReport, error) {
	if len(cfg.StartURLs) == 0 {
		return CheckReport{}, errors.New("the config has no start URL")
	}
	eng, done, err := newEngine(cfg, opts, nil, "check", clockOf(opts))
	if err != nil {
		return CheckReport{}, err
	}
	defer done()
	x, err := extract.Compile(cfg.Extract)
	if err != nil {
		return CheckReport{}, err
	}
	rep := CheckReport{Fields: x.Fields()}
	rep.Listing = eng.Inspect(ctx, cfg.StartURLs[0], crawl.KindListing)
	if itemURL == "" && len(rep.Listing.ItemLinks) > 0 {
		itemURL = rep.Listing.ItemLinks[0]
	}
	if itemURL != "" && ctx.Err() == nil {
		item := eng.Inspect(ctx, itemURL, crawl.KindItem)
		rep.Item = &item
	}
	return rep, nil
}
