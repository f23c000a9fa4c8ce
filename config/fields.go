package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/internal/closest"
)

// The [listing], [item] and [item.fields] keys that take more than one
// shape in TOML (a string or a list, a string or a table, any scalar) are
// checked here and turned into the extraction spec; extract.Compile checks
// what they say.

// listing reads [listing].
func (v *validator) listing(r rawListing, fromSitemaps bool) extract.ListingSpec {
	ls := extract.ListingSpec{Format: extract.Format(r.Format), End: r.End}
	ls.ItemLinks, ls.ItemLinksScript = v.listingSource("listing.item_links", r.ItemLinks)
	ls.Items, ls.ItemsScript = v.listingSource("listing.items", r.Items)
	var next nextPageTable
	ls.NextPage, next = v.nextPage(r.NextPage)
	ls.NextPageAttr, v.linkHeader = next.attr, next.linkHeader
	v.cursor = v.nextCursor(r, next)
	ls.NextCursor = v.cursor != nil
	if r.ItemLinks == nil && r.Items == nil && !fromSitemaps {
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

// listingSource reads items or item_links: a selector (or expression), or
// a table { js = "NAME", json = "expr" } or { css = "selector", json =
// "expr" } that reads JSON inside an HTML listing page.
func (v *validator) listingSource(key string, val any) (string, *extract.ScriptSource) {
	switch x := val.(type) {
	case nil:
		return "", nil
	case string:
		if strings.TrimSpace(x) == "" {
			v.errorf(key, "is empty")
		}
		return x, nil
	case map[string]any:
		var s extract.ScriptSource
		for _, k := range slices.Sorted(maps.Keys(x)) {
			str, ok := x[k].(string)
			switch {
			case k != "js" && k != "css" && k != "json":
				v.errorf(key+"."+k, "unknown key%s", suggestAmong(k, "js", "css", "json"))
			case !ok:
				v.errorf(key+"."+k, "must be a string, got %s", tomlKind(x[k]))
			case strings.TrimSpace(str) == "":
				v.errorf(key+"."+k, "is empty")
			case k == "js":
				s.JS = str
			case k == "css":
				s.CSS = str
			default:
				s.JSON = str
			}
		}
		return "", &s
	}
	v.errorf(key, `must be a selector (or expression), or a table { js = "...", json = "..." } or { css = "...", json = "..." }, got %s`, tomlKind(val))
	return "", nil
}

// nextPageTable is what next_page says beyond a plain selector or
// expression.
type nextPageTable struct {
	attr       string // { css, attr }: the attribute holding the URL
	linkHeader bool   // { header = "link" }
	// { json, param } or { json, body }: the expression names a cursor
	// for this request's query parameter param, or for the member of its
	// body at the dotted path body.
	param, body string
}

// nextPageKeys are the keys a next_page table may hold.
var nextPageKeys = []string{"css", "attr", "header", "json", "param", "body"}

// nextPage reads next_page: a selector (or expression), or a table:
// { css = "selector", attr = "attribute" }, { header = "link" } (the Link
// header's rel="next" target), { json = "expr", param = "cursor" } or
// { json = "expr", body = "variables.after" }.
func (v *validator) nextPage(val any) (sel string, t nextPageTable) {
	switch x := val.(type) {
	case nil:
		return "", t
	case string:
		if strings.TrimSpace(x) == "" {
			v.errorf("listing.next_page", "is empty: leave it out when there is no next page")
		}
		return x, t
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			s, ok := x[k].(string)
			switch {
			case !slices.Contains(nextPageKeys, k):
				v.errorf("listing.next_page."+k, "unknown key%s", suggestAmong(k, nextPageKeys...))
			case !ok:
				v.errorf("listing.next_page."+k, "must be a string, got %s", tomlKind(x[k]))
			case strings.TrimSpace(s) == "":
				v.errorf("listing.next_page."+k, "is empty")
			case k == "header":
				if !strings.EqualFold(strings.TrimSpace(s), "link") {
					v.errorf("listing.next_page.header", `must be "link" (the rel="next" target of the Link header), got %q`, s)
				}
				t.linkHeader = true
			case k == "css" || k == "json":
				sel = s
			case k == "attr":
				t.attr = s
			case k == "param":
				t.param = strings.TrimSpace(s)
			default:
				t.body = strings.TrimSpace(s)
			}
		}
		v.nextPageShape(x)
		if t.linkHeader {
			return "", nextPageTable{linkHeader: true}
		}
		return sel, t
	}
	v.errorf("listing.next_page", `must be a selector or a table { css = "...", attr = "..." }, { header = "link" }, or { json = "...", param = "..." } or body, got %s`, tomlKind(val))
	return "", t
}

// nextPageShape checks which keys a next_page table combines.
func (v *validator) nextPageShape(x map[string]any) {
	has := func(k string) bool { _, ok := x[k]; return ok }
	switch {
	case has("header") && len(x) > 1:
		v.errorf("listing.next_page", `header goes alone: { header = "link" }`)
	case has("header"):
	case has("css") && has("json"):
		v.errorf("listing.next_page", "css and json are two sources: a table has one")
	case has("json") && has("param") == has("body"):
		v.errorf("listing.next_page", `a json next page names where its value goes: { json = "...", param = "cursor" } (a query parameter) or { json = "...", body = "variables.after" } (a member of the request's JSON body), one of them`)
	case has("json") && has("attr"):
		v.errorf("listing.next_page.attr", "only with css")
	case has("css") && (has("param") || has("body")):
		v.errorf("listing.next_page", "param and body go with json, the expression whose value they carry")
	case !has("css") && !has("json"):
		v.errorf("listing.next_page", `a table needs css, the selector of the element holding the URL: { css = "#grid", attr = "data-next-api" }, or header: { header = "link" }, or json with param or body`)
	}
}

// item reads [item] but its fields.
func (v *validator) item(r rawItem) extract.ItemSpec {
	return extract.ItemSpec{Format: extract.Format(r.Format), Rows: r.Rows, StrictTypes: r.StrictTypes}
}

// field reads one [item.fields] entry.
func (v *validator) field(name string, f rawField) extract.FieldSpec {
	key := "item.fields." + name
	fs := extract.FieldSpec{
		Name: name, CSS: v.css(key+".css", f.CSS), JSONLD: f.JSONLD, JS: f.JS, JSON: f.JSON,
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
		if closest.Distance(key, k) < 3 {
			return ` (did you mean "` + k + `"?)`
		}
	}
	return ""
}
