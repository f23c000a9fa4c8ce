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
	if x.itemsJSON != nil {
		if !x.readJSONCards(r, &l, doc, pageURL) {
			l.note("items", fmt.Sprintf("items %q yields null: the expression finds nothing on this page", x.spec.Listing.Items))
		}
	} else if x.itemLinksJSON != nil {
		var found bool
		l.ItemLinks, l.Dropped, found = x.jsonLinks(r, x.itemLinksJSON, doc, pageURL)
		if !found {
			l.note("item_links", fmt.Sprintf("item_links %q yields null: the expression finds nothing on this page", x.spec.Listing.ItemLinks))
		}
	}
	x.jsonCursor(r, doc, &l)
	if x.nextPageJSON != nil && !x.spec.Listing.NextCursor {
		var dropped int
		l.NextPages, dropped, _ = x.jsonLinks(r, x.nextPageJSON, doc, pageURL)
		l.Dropped += dropped
	}
	x.jsonEnding(r, doc, &l)
	return l
}

// jsonEnding says whether a JSON listing page that yields nothing shows
// the end of a pages chain: its items (else item_links) expression yields
// an empty array. null, a missing member or a value of another shape (an
// error object under a 200) does not: such a page may have failed.
func (x *Extractor) jsonEnding(r *reader, doc any, l *Listing) {
	e, key, src := x.itemsJSON, "items", x.spec.Listing.Items
	if e == nil {
		e, key, src = x.itemLinksJSON, "item_links", x.spec.Listing.ItemLinks
	}
	if e == nil || !l.empty() {
		return
	}
	res, err := e.search(doc, &r.floats)
	arr, isArray := res.([]any)
	switch {
	case err != nil:
		l.NotEnd = fmt.Sprintf("%s %q fails on it: %v", key, src, err)
	case isArray && len(arr) == 0:
		l.End = true
	case isArray:
		l.NotEnd = fmt.Sprintf("%s %q yields an array of %d values, none of them usable", key, src, len(arr))
	default:
		l.NotEnd = fmt.Sprintf("%s %q yields %s, not an empty array", key, src, jsonKind(res))
	}
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

// readJSONCards fills l.Items and l.Unusable from the listing's cards. It
// reports whether the items expression found anything (null is nothing,
// an empty array is an empty page).
func (x *Extractor) readJSONCards(r *reader, l *Listing, doc any, pageURL *url.URL) bool {
	res, err := x.itemsJSON.search(doc, &r.floats)
	if err != nil || res == nil {
		return false
	}
	cards, ok := res.([]any)
	if !ok {
		cards = []any{res}
	}
	pageStr := urlString(pageURL)
	b := batch{items: l.Items, unusable: l.Unusable}
	defer func() { l.Items, l.Unusable = b.items, b.unusable }()
	for i, card := range cards {
		if limit := x.spec.Listing.MaxLinks; limit > 0 && i >= limit {
			l.Dropped++
			continue
		}
		obj, ok := card.(map[string]any)
		if !ok {
			if card != nil {
				b.unusable = append(b.unusable, noItem(pageStr, fmt.Sprintf("listing.items: card %d is %s, not an object", i+1, jsonKind(card))))
			}
			continue
		}
		cardURL, linked := pageStr, false
		if x.itemLinksJSON != nil {
			strs, _ := jsonStrings(r, x.itemLinksJSON, obj)
			for _, s := range strs {
				if link, ok := linkURL(pageURL, s); ok {
					cardURL, linked = x.params.StripString(link), true
					break
				}
			}
		}
		r.jsonItems(&b, obj, cardURL, !linked)
	}
	return true
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
