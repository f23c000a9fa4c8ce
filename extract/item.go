package extract

import (
	"errors"
	"net/url"

	"github.com/PuerkitoBio/goquery"
)

// Item is one extracted record.
type Item struct {
	// Key is the key field's value as text (strconv formatting for numbers
	// and bools, RFC 3339 with nanoseconds for timestamps), or URL when the
	// Spec has no Key.
	Key string
	// URL is the item's page URL, or for a listing card the card's link.
	URL string
	// Values holds one value per field, in Extractor.Fields order: nil for
	// an absent optional scalar, else string, int64, float64, bool or
	// time.Time (UTC); for Multiple fields a non-nil []string, []int64,
	// []float64, []bool or []time.Time, empty when nothing matched.
	Values []any
	// Reasons explains values that were found but dropped because they did
	// not parse (a scalar with no parsable match, list elements) and, for
	// an unusable item, why each required field is missing; nil when none.
	Reasons []string
}

// Item reads the fields from the whole document of an item page. URL
// fields resolve against BaseURL(doc, pageURL) and stay as written when
// there is no base at all. When a required field (the key field included)
// has no usable value the error is an *UnusableError, returned alongside
// the partly filled Item; a nil doc is an ordinary error.
func (x *Extractor) Item(doc *goquery.Document, pageURL *url.URL) (Item, error) {
	if doc == nil {
		return Item{}, errors.New("extract: nil document")
	}
	base := pageURL
	if x.urlFields {
		base = BaseURL(doc, pageURL)
	}
	itemURL := ""
	if pageURL != nil {
		itemURL = pageURL.String()
	}
	r := newReader(x, base)
	defer r.release()
	it, uerr := r.item(doc.Selection, itemURL)
	if uerr != nil {
		return it, uerr
	}
	return it, nil
}

// item reads every field relative to root (a document or a card).
func (r *reader) item(root *goquery.Selection, itemURL string) (Item, *UnusableError) {
	x := r.x
	r.reasons = nil
	it := Item{URL: itemURL, Values: make([]any, len(x.fields))}
	var missing []string
	for i := range x.fields {
		f := &x.fields[i]
		var present, matched bool
		r.stats.regexMiss, r.stats.bad = 0, 0
		if f.Multiple {
			nodes := root.FindMatcher(f.sel).Nodes
			it.Values[i], present = r.list(f, nodes)
			matched = len(nodes) > 0
		} else {
			it.Values[i], present, matched = r.first(f, root)
		}
		if !present && f.required {
			missing = append(missing, f.Name)
			r.explain(f, matched)
		}
	}
	it.Reasons = r.reasons
	if len(missing) > 0 {
		return it, &UnusableError{URL: itemURL, Missing: missing, Reasons: r.reasons}
	}
	if x.key >= 0 {
		it.Key = formatKey(it.Values[x.key])
	} else {
		it.Key = itemURL
	}
	return it, nil
}
