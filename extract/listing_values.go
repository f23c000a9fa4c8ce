package extract

import (
	"fmt"
	"net/url"
)

// listingValues takes the values a JSON listing's expression yields, one
// at a time, in document order: with items, cards, each read as an item
// (or its rows) when it is an object; else item links, the strings among
// them. A card is let go once read, so a page read one element at a time
// keeps only what its cards yield.
type listingValues struct {
	x       *Extractor
	r       *reader
	l       *Listing
	pageURL *url.URL
	pageStr string
	cards   bool

	n       int // values taken
	dropped int // cards past MaxLinks
	b       batch
	links   linkSet
	// floats are the float64 copies of one card's objects (see
	// jsonExpr), cleared after each card.
	floats floatCopies
}

// newListingValues returns the taker of the listing's values into l.
func (x *Extractor) newListingValues(r *reader, l *Listing, pageURL *url.URL) *listingValues {
	c := &listingValues{x: x, r: r, l: l, pageURL: pageURL, pageStr: urlString(pageURL), cards: x.itemsJSON != nil || x.scriptItems != nil}
	c.restart()
	return c
}

// take takes the next value.
func (c *listingValues) take(v any) {
	i := c.n
	c.n++
	if !c.cards {
		if s, ok := v.(string); ok {
			if link, ok := linkURL(c.pageURL, s); ok {
				c.links.add(link, nil)
			}
		}
		return
	}
	if limit := c.x.spec.Listing.MaxLinks; limit > 0 && i >= limit {
		c.dropped++
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		if v != nil {
			c.b.unusable = append(c.b.unusable, noItem(c.pageStr, fmt.Sprintf("listing.items: card %d is %s, not an object", i+1, jsonKind(v))))
		}
		return
	}
	page := c.r.floats
	c.r.floats = c.floats
	defer func() {
		clear(c.r.floats)
		c.floats, c.r.floats = c.r.floats, page
	}()
	cardURL, linked := c.pageStr, false
	if c.x.itemLinksJSON != nil {
		strs, _ := jsonStrings(c.r, c.x.itemLinksJSON, obj)
		for _, s := range strs {
			if link, ok := linkURL(c.pageURL, s); ok {
				cardURL, linked = c.x.params.StripString(link), true
				break
			}
		}
	}
	c.r.jsonItems(&c.b, obj, cardURL, !linked)
}

// restart voids the values taken so far.
func (c *listingValues) restart() {
	c.n, c.dropped = 0, 0
	c.b = batch{}
	c.links = linkSet{limit: c.x.spec.Listing.MaxLinks}
}

// done writes what was taken to the listing; found says whether the
// expression yielded anything but null (an empty array is an empty
// page), and a note says so when it did not.
func (c *listingValues) done(found bool) {
	c.ending(found)
	l, spec := c.l, c.x.spec.Listing
	if c.cards {
		l.Items, l.Unusable = c.b.items, c.b.unusable
		l.Dropped += c.dropped
		if !found {
			l.note("items", fmt.Sprintf("items %q yields null: the expression finds nothing on this page", spec.Items))
		}
		return
	}
	l.ItemLinks = c.links.list
	l.Dropped += c.links.dropped
	if !found {
		l.note("item_links", fmt.Sprintf("item_links %q yields null: the expression finds nothing on this page", spec.ItemLinks))
	}
}

// ending says whether a page that yields nothing shows the end of a pages
// chain: the expression yielded an empty array (found, and no value,
// which a value of another shape would be). null, a missing member or
// values none of which is a card or a link (an error object under a 200)
// do not: such a page may have failed.
func (c *listingValues) ending(found bool) {
	l, key, src := c.l, "item_links", c.x.spec.Listing.ItemLinks
	if c.cards {
		key, src = "items", c.x.spec.Listing.Items
	}
	if len(c.b.items)+len(c.b.unusable)+len(c.links.list) > 0 {
		return
	}
	switch {
	case found && c.n == 0:
		l.End = true
	case found:
		l.NotEnd = fmt.Sprintf("%s %q yields %d values, none of them an item or a link", key, src, c.n)
	default:
		l.NotEnd = fmt.Sprintf("%s %q yields null or nothing, not an empty array", key, src)
	}
}
