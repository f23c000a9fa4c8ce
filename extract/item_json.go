package extract

import (
	"fmt"
	"net/url"
)

// ReadItemsJSON reads the items of a JSON item page from its body, with
// the result ItemsJSON gives on the document ParseJSON makes of it. When
// the paths that the fields (and rows) read of the document are all
// known, only the values at those paths are decoded, into a skeleton of
// the document: a big page whose fields read a few values of it holds
// little more than its body. An error means the body is not one JSON
// value.
func (x *Extractor) ReadItemsJSON(body []byte, pageURL *url.URL) ([]Item, []Unusable, error) {
	var doc any
	var err error
	if keep, ok := x.itemReads(); ok {
		s := jsonStream{keep: keep}
		if doc, _, err = s.read(body); err != nil {
			err = fmt.Errorf("extract: parse json: %w", err)
		}
	} else {
		doc, err = x.ParseJSON(body)
	}
	if err != nil {
		return nil, nil, err
	}
	items, unusable := x.ItemsJSON(doc, pageURL)
	return items, unusable, nil
}

// itemReads returns the paths the fields and rows of a JSON item page
// read of its document (see readPaths): the rows expression's and the
// page fields' with rows, else every field's; false when one of them is
// not known.
func (x *Extractor) itemReads() ([][]string, bool) {
	var keep [][]string
	add := func(e *jsonExpr) bool {
		keep = append(keep, e.reads...)
		return e.readsKnown
	}
	if x.rowsJSON != nil && !add(x.rowsJSON) {
		return nil, false
	}
	for i := range x.fields {
		f := &x.fields[i]
		switch {
		case x.rowsJSON != nil && !f.page:
			// Read on the rows, which hold only what the rows
			// expression read.
		case f.json == nil || len(f.sels) > 0 || f.JSONLD != "":
			// Reads nothing of a JSON document.
		case !add(f.json):
			return nil, false
		}
	}
	return keep, true
}
