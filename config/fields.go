package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/databrew/databrew-stage/extract"
)

// The [listing], [item] and [item.fields] keys that take more than one
// shape in TOML (a string or a list, a string or a table, any scalar) are
// checked here and turned into the extraction spec; extract.Compile checks
// what they say.

// listing reads [listing].
func (v *validator) listing(r rawListing, fromSitemaps bool) extract.ListingSpec {
	ls := extract.ListingSpec{Format: extract.Format(r.Format), ItemLinks: r.ItemLinks, Items: r.Items, End: r.End}
	ls.NextPage, ls.NextPageAttr, v.linkHeader = v.nextPage(r.NextPage)
	if r.ItemLinks == "" && r.Items == "" && !fromSitemaps {
		v.errorf("listing.item_links", "required unless listing.items or listing.sitemaps is set")
	}
	switch {
	case r.End != "" && strings.TrimSpace(r.End) == "":
		v.errorf("listing.end", "is empty: leave it out, or name what marks the page past the last one (\"p.no-results\")")
	case r.End != "" && r.Pages == nil:
		v.errorf("listing.end", "marks the end of a pages chain: it needs listing.pages")
	}
	return ls
}

// nextPage reads next_page: a selector (or expression), a table
// { css = "selector", attr = "attribute" }, or { header = "link" } (the
// Link header's rel="next" target).
func (v *validator) nextPage(val any) (sel, attr string, linkHeader bool) {
	switch x := val.(type) {
	case nil:
		return "", "", false
	case string:
		if strings.TrimSpace(x) == "" {
			v.errorf("listing.next_page", "is empty: leave it out when there is no next page")
		}
		return x, "", false
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			s, ok := x[k].(string)
			switch {
			case k != "css" && k != "attr" && k != "header":
				v.errorf("listing.next_page."+k, "unknown key%s", suggestAmong(k, "css", "attr", "header"))
			case !ok:
				v.errorf("listing.next_page."+k, "must be a string, got %s", tomlKind(x[k]))
			case strings.TrimSpace(s) == "":
				v.errorf("listing.next_page."+k, "is empty")
			case k == "header":
				if !strings.EqualFold(strings.TrimSpace(s), "link") {
					v.errorf("listing.next_page.header", `must be "link" (the rel="next" target of the Link header), got %q`, s)
				}
				linkHeader = true
			case k == "css":
				sel = s
			default:
				attr = s
			}
		}
		_, hasCSS := x["css"]
		switch _, hasHeader := x["header"]; {
		case hasHeader && len(x) > 1:
			v.errorf("listing.next_page", `header goes alone: { header = "link" }`)
		case !hasHeader && !hasCSS:
			v.errorf("listing.next_page", `a table needs css, the selector of the element holding the URL: { css = "#grid", attr = "data-next-api" }, or header: { header = "link" }`)
		}
		if linkHeader {
			return "", "", true
		}
		return sel, attr, false
	}
	v.errorf("listing.next_page", `must be a selector or a table { css = "...", attr = "..." } or { header = "link" }, got %s`, tomlKind(val))
	return "", "", false
}

// item reads [item] but its fields.
func (v *validator) item(r rawItem) extract.ItemSpec {
	return extract.ItemSpec{Format: extract.Format(r.Format), Rows: r.Rows}
}

// field reads one [item.fields] entry.
func (v *validator) field(name string, f rawField) extract.FieldSpec {
	key := "item.fields." + name
	fs := extract.FieldSpec{
		Name: name, CSS: v.css(key+".css", f.CSS), JSONLD: f.JSONLD, JSON: f.JSON,
		Type: extract.Type(f.Type), Attr: f.Attr, Regex: f.Regex, Decimal: f.Decimal,
		URL: f.URL, Required: f.Required, Multiple: f.Multiple, Scope: f.Scope, Format: f.Format,
	}
	if f.Map != nil {
		fs.Map = make(map[string]any, len(f.Map))
		for k, val := range f.Map {
			if v.scalar(key+".map", fmt.Sprintf("%q: ", k), val) {
				fs.Map[k] = val
			}
		}
	}
	if f.Default != nil && v.scalar(key+".default", "", f.Default) {
		fs.Default = f.Default
	}
	return fs
}

// css reads css: a selector, or an array of them tried in order.
func (v *validator) css(key string, val any) []string {
	switch x := val.(type) {
	case nil:
		return nil
	case string:
		return []string{x}
	case []any:
		if len(x) == 0 {
			v.errorf(key, "is an empty list: give at least one selector")
			return nil
		}
		out := make([]string, 0, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				v.errorf(key, "entry %d must be a selector string, got %s", i+1, tomlKind(e))
				continue
			}
			out = append(out, s)
		}
		return out
	}
	v.errorf(key, "must be a selector or a list of selectors, got %s", tomlKind(val))
	return nil
}

// scalar checks that a map value or default is a string, a number, a
// boolean or a date-time with an offset; extract checks it against the
// field's type.
func (v *validator) scalar(key, prefix string, val any) bool {
	switch val.(type) {
	case string, int64, float64, bool, time.Time:
		return true
	}
	v.errorf(key, "%smust be a string, a number or a boolean, got %s", prefix, tomlKind(val))
	return false
}

// specKey returns the config key a spec problem is about.
func specKey(se *extract.SpecError, nextPageTable bool) string {
	key := se.Field
	if se.Key != "" {
		key += "." + se.Key
	}
	if key == "listing.next_page" && nextPageTable {
		key += ".css"
	}
	return key
}

// tomlKind names the kind of a decoded TOML value.
func tomlKind(val any) string {
	switch val.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case time.Time:
		return "a date-time"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a local date or time (write it as a string)"
}

// suggestAmong returns ` (did you mean "x"?)` when key is close to one of
// keys, or "".
func suggestAmong(key string, keys ...string) string {
	for _, k := range keys {
		if editDistance(key, k) < 3 {
			return ` (did you mean "` + k + `"?)`
		}
	}
	return ""
}
