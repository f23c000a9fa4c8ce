package extract

import (
	"errors"
	"net/url"
	"strconv"

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
	FieldReport
}

// FieldReport says how reading one item went, per field in Values order.
type FieldReport struct {
	// Why says why the field has no value of its own (it is then its
	// default, or nil): it found nothing, or what it found did not parse.
	// Empty for a field that found a value; nil when every field did.
	Why []string
	// Bad holds, for a field with a type error, the value it found that
	// its type does not take (cut to 120 bytes): the field is NULL, never
	// its default. Empty for the other fields; nil when none had one.
	Bad []string
}

// TypeError reports whether field i had a type error.
func (r FieldReport) TypeError(i int) bool { return i < len(r.Bad) && r.Bad[i] != "" }

// FoundNothing reports whether field i found nothing at all.
func (r FieldReport) FoundNothing(i int) bool {
	return i < len(r.Why) && r.Why[i] != "" && !r.TypeError(i)
}

// Item reads the fields from the whole document of an item page. URL
// fields resolve against BaseURL(doc, pageURL) and stay as written when
// there is no base at all. When a required field (the key field included)
// has no usable value the error is an *UnusableError, returned alongside
// the partly filled Item; a nil doc is an ordinary error. With item rows
// it returns the first usable row's item, or else the first row's error;
// Items reads them all.
func (x *Extractor) Item(doc *goquery.Document, pageURL *url.URL) (Item, error) {
	if doc == nil {
		return Item{}, errors.New("extract: nil document")
	}
	if x.rowsCSS != nil {
		items, unusable := x.Items(doc, pageURL)
		if len(items) > 0 {
			return items[0], nil
		}
		return Item{URL: unusable[0].URL}, unusable[0].Err
	}
	r := newReader(x, x.htmlBase(doc, pageURL))
	defer r.release()
	it, uerr := r.item(&source{row: doc.Selection, page: doc.Selection}, urlString(pageURL), false)
	if uerr != nil {
		return it, uerr
	}
	return it, nil
}

// Items reads the items of an HTML item page: one per row when the Spec
// has item rows, else one for the page. Each item's URL is the page's;
// URL fields resolve as for Item. An item that lacks a required field is
// in unusable instead, and so is the page when no row matches.
func (x *Extractor) Items(doc *goquery.Document, pageURL *url.URL) (items []Item, unusable []Unusable) {
	if doc == nil {
		return nil, []Unusable{noItem(urlString(pageURL), "no document")}
	}
	r := newReader(x, x.htmlBase(doc, pageURL))
	defer r.release()
	var b batch
	r.htmlItems(&b, doc.Selection, urlString(pageURL), false)
	return b.items, b.unusable
}

// ItemsJSON reads the items of a JSON item page, as ParseJSON returns
// it: one per row when the Spec has item rows (an expression giving an
// array), else one for the document. URL fields resolve against pageURL.
func (x *Extractor) ItemsJSON(doc any, pageURL *url.URL) (items []Item, unusable []Unusable) {
	r := newReader(x, pageURL)
	defer r.release()
	var b batch
	r.jsonItems(&b, doc, urlString(pageURL), false)
	return b.items, b.unusable
}

// htmlBase returns the base URL fields resolve against.
func (x *Extractor) htmlBase(doc *goquery.Document, pageURL *url.URL) *url.URL {
	if x.urlFields {
		return BaseURL(doc, pageURL)
	}
	return pageURL
}

func urlString(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.String()
}

// source is where one item's fields are read: its row and its page (the
// card, for an item read from a card), HTML or JSON. Without rows the row
// is the page.
type source struct {
	row, page         *goquery.Selection
	rowJSON, pageJSON any
	json              bool
}

// field reads one field from src.
func (r *reader) field(f *field, src *source) (any, bool) {
	if src.json {
		if f.page {
			return r.jsonField(f, src.pageJSON)
		}
		return r.jsonField(f, src.rowJSON)
	}
	if f.page {
		return r.htmlField(f, src.page)
	}
	return r.htmlField(f, src.row)
}

// batch collects the items of a page: usable and unusable.
type batch struct {
	items    []Item
	unusable []Unusable
}

// htmlItems reads the items under root, a page or a card, into b.
func (r *reader) htmlItems(b *batch, root *goquery.Selection, itemURL string, linkFromField bool) {
	if r.x.rowsCSS == nil {
		r.row(b, &source{row: root, page: root}, itemURL, linkFromField)
		return
	}
	rows := root.FindMatcher(r.x.rowsCSS)
	if len(rows.Nodes) == 0 {
		b.unusable = append(b.unusable, noItem(itemURL, "item.rows "+strconv.Quote(r.x.spec.Item.Rows)+" matches nothing"))
		return
	}
	for i := range rows.Nodes {
		r.row(b, &source{row: rows.Eq(i), page: root}, itemURL, linkFromField)
	}
}

// jsonItems reads the items of a JSON page or card into b.
func (r *reader) jsonItems(b *batch, root any, itemURL string, linkFromField bool) {
	if r.x.rowsJSON == nil {
		r.row(b, &source{rowJSON: root, pageJSON: root, json: true}, itemURL, linkFromField)
		return
	}
	res, err := r.x.rowsJSON.search(root, &r.floats)
	if err != nil {
		b.unusable = append(b.unusable, noItem(itemURL, "item.rows: "+err.Error()))
		return
	}
	rows, ok := res.([]any)
	if !ok && res != nil {
		rows = []any{res}
	}
	n := 0
	for _, row := range rows {
		if row != nil {
			n++
			r.row(b, &source{rowJSON: row, pageJSON: root, json: true}, itemURL, linkFromField)
		}
	}
	if n == 0 {
		b.unusable = append(b.unusable, noItem(itemURL, "item.rows "+strconv.Quote(r.x.spec.Item.Rows)+" yields nothing"))
	}
}

// row reads one item into b.
func (r *reader) row(b *batch, src *source, itemURL string, linkFromField bool) {
	it, err := r.item(src, itemURL, linkFromField)
	if err != nil {
		b.unusable = append(b.unusable, Unusable{URL: err.URL, Err: err, Report: it.FieldReport})
		return
	}
	b.items = append(b.items, it)
}

// noItem is a page or card that yields no item at all.
func noItem(itemURL, reason string) Unusable {
	return Unusable{URL: itemURL, Err: &UnusableError{URL: itemURL, Reasons: []string{reason}}}
}

// item reads every field of one item from src. Its URL is itemURL, or
// with linkFromField (a card that links nowhere) the first URL field's
// value when it has one.
func (r *reader) item(src *source, itemURL string, linkFromField bool) (Item, *UnusableError) {
	x := r.x
	r.reasons = nil
	it := Item{Values: make([]any, len(x.fields))}
	var missing []string
	for i := range x.fields {
		f := &x.fields[i]
		r.stats.regexMiss, r.stats.bad, r.stats.typeErr, r.miss, r.badValue = 0, 0, 0, "", ""
		v, present := r.field(f, src)
		if f.Multiple && r.stats.typeErr > 0 {
			// A list with an element that does not parse is NULL.
			v, present = nil, false
		}
		if !present {
			why := r.miss
			if r.stats.bad > 0 {
				why = r.badReason
			}
			if it.Why == nil {
				it.Why = make([]string, len(x.fields))
			}
			it.Why[i] = why
			if r.stats.typeErr > 0 {
				if it.Bad == nil {
					it.Bad = make([]string, len(x.fields))
				}
				it.Bad[i] = r.badValue
				if x.spec.Item.StrictTypes && !f.required {
					missing = append(missing, f.Name)
					r.reasons = append(r.reasons, why)
				}
			}
		}
		switch {
		case present:
		case r.stats.bad > 0:
			if !f.Multiple {
				r.reasons = append(r.reasons, r.badReason)
			}
		case f.hasDef:
			v, present = f.def, true
		}
		it.Values[i] = v
		if !present && f.required {
			missing = append(missing, f.Name)
			if r.stats.bad == 0 {
				r.reasons = append(r.reasons, f.Name+": "+r.miss)
			}
		}
	}
	if linkFromField && x.urlField >= 0 {
		if s, ok := it.Values[x.urlField].(string); ok {
			if link, ok := linkURL(nil, s); ok {
				itemURL = link
			}
		}
	}
	it.URL = itemURL
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
