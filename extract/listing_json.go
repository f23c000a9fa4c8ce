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
		x.readJSONCards(r, &l, doc, pageURL)
	} else if x.itemLinksJSON != nil {
		l.ItemLinks, l.Dropped = x.jsonLinks(r, x.itemLinksJSON, doc, pageURL)
	}
	if x.nextPageJSON != nil {
		var dropped int
		l.NextPages, dropped = x.jsonLinks(r, x.nextPageJSON, doc, pageURL)
		l.Dropped += dropped
	}
	return l
}

// jsonLinks returns the URLs e gives on doc, absolute and de-duplicated,
// and how many were dropped past MaxLinks.
func (x *Extractor) jsonLinks(r *reader, e *jsonExpr, doc any, base *url.URL) ([]string, int) {
	set := linkSet{limit: x.spec.Listing.MaxLinks}
	for _, s := range jsonStrings(r, e, doc) {
		if link, ok := linkURL(base, s); ok {
			set.add(link)
		}
	}
	return set.list, set.dropped
}

// jsonStrings returns the strings e gives on doc: one, or those of an
// array; nothing when it fails.
func jsonStrings(r *reader, e *jsonExpr, doc any) []string {
	res, err := e.search(doc, &r.floats)
	if err != nil {
		return nil
	}
	switch res := res.(type) {
	case string:
		return []string{res}
	case []any:
		out := make([]string, 0, len(res))
		for _, v := range res {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// readJSONCards fills l.Items and l.Unusable from the listing's cards.
func (x *Extractor) readJSONCards(r *reader, l *Listing, doc any, pageURL *url.URL) {
	res, err := x.itemsJSON.search(doc, &r.floats)
	if err != nil {
		return
	}
	cards, ok := res.([]any)
	if !ok && res != nil {
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
			for _, s := range jsonStrings(r, x.itemLinksJSON, obj) {
				if link, ok := linkURL(pageURL, s); ok {
					cardURL, linked = link, true
					break
				}
			}
		}
		r.jsonItems(&b, obj, cardURL, !linked)
	}
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
