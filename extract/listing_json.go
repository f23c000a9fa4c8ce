package extract

import (
	"fmt"
	"net/url"
)

// ListingJSON reads a JSON listing page, as ParseJSON returns it, with the
// Spec's expressions: ItemLinks gives URL strings, NextPage the next
// page's URL (null or missing: none), and Items an array of card objects,
// each read as an item (one per row with item rows). Links resolve against
// pageURL. A card's URL is the ItemLinks expression's URL on the card
// object, else the value of the first URL field, else pageURL; with
// Items set, ItemLinks names the cards' links only. MaxLinks bounds links
// and cards as for Listing.
func (x *Extractor) ListingJSON(doc any, pageURL *url.URL) Listing {
	var l Listing
	r := newReader(x, pageURL)
	defer r.release()
	if e := x.listingJSON(); e != nil {
		c := x.newListingValues(r, &l, pageURL)
		found := false
		if res, err := e.search(doc, &r.floats); err == nil && res != nil {
			found = true
			if arr, ok := res.([]any); ok {
				for _, v := range arr {
					c.take(v)
				}
			} else {
				c.take(res)
			}
		}
		c.done(found)
	}
	x.nextPagesJSON(r, &l, doc, pageURL)
	return l
}

// ReadListingJSON reads a JSON listing page from its body, with the
// result ListingJSON gives on the document ParseJSON makes of it. When
// the items expression (without items, item_links) names an array by a
// path of fields, or projects over one (data.products, items[].url,
// data.products.edges[].node), and next_page reads nothing of that array,
// the body is read one element at a time instead of as a tree of the
// whole page: the memory it takes beyond the body is about one card's
// and what the cards yield. An error means the body is not one JSON value.
func (x *Extractor) ReadListingJSON(body []byte, pageURL *url.URL) (Listing, error) {
	e := x.streamedJSON()
	if e == nil {
		doc, err := x.ParseJSON(body)
		if err != nil {
			return Listing{}, err
		}
		return x.ListingJSON(doc, pageURL), nil
	}
	var l Listing
	r := newReader(x, pageURL)
	defer r.release()
	c := x.newListingValues(r, &l, pageURL)
	s := jsonStream{plan: e.stream, numeric: e.numeric, each: c.take, restart: c.restart}
	if x.nextPageJSON != nil {
		s.keep = x.nextPageJSON.reads
	}
	skel, found, err := s.read(body)
	if err != nil {
		return Listing{}, fmt.Errorf("extract: parse json: %w", err)
	}
	c.done(found)
	x.nextPagesJSON(r, &l, skel, pageURL)
	return l, nil
}

// listingJSON is the expression that gives a JSON listing's cards, or
// without cards its item links; nil for neither.
func (x *Extractor) listingJSON() *jsonExpr {
	if x.itemsJSON != nil {
		return x.itemsJSON
	}
	return x.itemLinksJSON
}

// streamedJSON is the listing expression ReadListingJSON reads one
// element at a time, or nil: next_page, when set, must read only paths
// apart from the array's.
func (x *Extractor) streamedJSON() *jsonExpr {
	e := x.listingJSON()
	if e == nil || e.stream == nil {
		return nil
	}
	if n := x.nextPageJSON; n != nil && (!n.readsKnown || overlaps(n.reads, e.stream.path)) {
		return nil
	}
	return e
}

// nextPagesJSON fills l.NextPages from doc, or l.Cursor when next_page
// names a cursor.
func (x *Extractor) nextPagesJSON(r *reader, l *Listing, doc any, pageURL *url.URL) {
	if x.nextPageJSON == nil {
		return
	}
	if x.spec.Listing.NextCursor {
		x.jsonCursor(r, doc, l)
		return
	}
	var dropped int
	l.NextPages, dropped, _ = x.jsonLinks(r, x.nextPageJSON, doc, pageURL)
	l.Dropped += dropped
}

// jsonLinks returns the URLs e gives on doc, absolute and de-duplicated,
// how many were dropped past MaxLinks, and whether e found anything (a
// value other than null; an empty array is found).
func (x *Extractor) jsonLinks(r *reader, e *jsonExpr, doc any, base *url.URL) ([]string, int, bool) {
	set := linkSet{limit: x.spec.Listing.MaxLinks}
	strs, found := jsonStrings(r, e, doc)
	for _, s := range strs {
		if link, ok := linkURL(base, s); ok {
			set.add(link, nil)
		}
	}
	return set.list, set.dropped, found
}

// jsonStrings returns the strings e gives on doc: one, or those of an
// array; nothing when it fails. found is false when e yields null or
// fails.
func jsonStrings(r *reader, e *jsonExpr, doc any) (strs []string, found bool) {
	res, err := e.search(doc, &r.floats)
	if err != nil || res == nil {
		return nil, false
	}
	switch res := res.(type) {
	case string:
		return []string{res}, true
	case []any:
		out := make([]string, 0, len(res))
		for _, v := range res {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out, true
	}
	return nil, true
}

// jsonKind names the kind of a decoded JSON value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a number"
}
