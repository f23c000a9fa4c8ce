package extract

import "encoding/json"

// jsonCursor reads the cursor a JSON listing page names for the next
// listing request, when next_page names a cursor (ListingSpec.NextCursor)
// rather than a URL: the JSON text of the expression's value, or "" when
// the value ends the chain (null or nothing, false, "" or []).
func (x *Extractor) jsonCursor(r *reader, doc any, l *Listing) {
	if x.nextPageJSON == nil || !x.spec.Listing.NextCursor {
		return
	}
	res, err := x.nextPageJSON.search(doc, &r.floats)
	if err != nil || endsCursor(res) {
		return
	}
	if b, err := json.Marshal(res); err == nil {
		l.Cursor = string(b)
	}
}

// endsCursor reports whether a cursor value ends a chain.
func endsCursor(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	}
	return false
}
