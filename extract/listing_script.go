package extract

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"

	"github.com/databrew/databrew-stage/extract/jsliteral"
)

// A listing page's cards or item links may be JSON inside the HTML page
// (SPEC 6c): the value a script assigns to a name (__INITIAL_STATE__), or
// the JSON text of an element (script#__NEXT_DATA__), then a JMESPath
// expression on it. Each object of a cards array is read as a card of a
// JSON listing is; item links are a URL string or an array of them,
// resolved as the page's hrefs are.

// scriptSource is a compiled ScriptSource.
type scriptSource struct {
	spec   ScriptSource
	key    string // "items" or "item_links"
	sel    cascadia.Selector
	jsName string
	expr   *jsonExpr
}

// compileScript compiles one listing table.
func compileScript(s *ScriptSource, key string, bad func(string, string, error)) *scriptSource {
	if s == nil {
		return nil
	}
	out := &scriptSource{spec: *s, key: key}
	switch {
	case s.CSS != "" && s.JS != "":
		bad("listing."+key, "js", errors.New("a table has one source: css or js"))
	case s.CSS != "":
		sel, err := compileCSS(s.CSS)
		if err != nil {
			bad("listing."+key, "css", err)
		}
		out.sel = sel
		if s.JSON == "" {
			bad("listing."+key, "json", errors.New(`required with css: the expression on the element's JSON text ("@" takes all of it)`))
		}
	case s.JS != "":
		name, err := jsliteral.Canonical(s.JS)
		if err != nil {
			bad("listing."+key, "js", err)
		}
		out.jsName = name
	default:
		bad("listing."+key, "css", errors.New(`a table reads JSON in the page: { js = "window.__INITIAL_STATE__", json = "..." } or { css = "script#__NEXT_DATA__", json = "..." }`))
	}
	expr := s.JSON
	if expr == "" {
		expr = "@"
	}
	jp, err := compileJSON(expr)
	if err != nil {
		bad("listing."+key, "json", err)
	}
	out.expr = jp
	return out
}

// value returns what the source's expression yields on the page of root,
// or why it yields nothing.
func (s *scriptSource) value(r *reader, root *goquery.Selection) (any, string) {
	var doc any
	switch {
	case s.jsName != "":
		v := r.jsValueOf(documentOf(root.Nodes[0]), s.jsName)
		switch {
		case !v.found:
			return nil, fmt.Sprintf("no inline script assigns %s", s.spec.JS)
		case v.err != nil:
			return nil, fmt.Sprintf("the value assigned to %s does not parse, %v", s.spec.JS, v.err)
		}
		doc = v.doc
	default:
		nodes := root.FindMatcher(s.sel).Nodes
		if len(nodes) == 0 {
			return nil, fmt.Sprintf("no element matches %q", s.spec.CSS)
		}
		var found bool
		for _, n := range nodes {
			if v, err := decodeFirstJSON(rawText(&r.w, n)); err == nil {
				doc, found = v, true
				break
			}
		}
		if !found {
			return nil, fmt.Sprintf("no element %q matches holds JSON text", s.spec.CSS)
		}
	}
	res, err := s.expr.search(doc, &r.floats)
	switch {
	case err != nil:
		return nil, fmt.Sprintf("json %q: %v", s.expr.src, err)
	case res == nil:
		return nil, fmt.Sprintf("json %q yields null", s.expr.src)
	}
	return res, ""
}

// scriptCards reads the cards of an HTML listing page from JSON in it.
func (x *Extractor) scriptCards(r *reader, l *Listing, root *goquery.Selection, pageURL *url.URL) {
	res, why := x.scriptItems.value(r, root)
	c := x.newListingValues(r, l, pageURL)
	switch arr, ok := res.([]any); {
	case why != "":
		l.note("items", "items "+x.scriptItems.describe()+" yields nothing: "+why)
	case ok:
		for _, v := range arr {
			c.take(v)
		}
	default:
		l.note("items", fmt.Sprintf("items %s yields %s, not an array of cards", x.scriptItems.describe(), jsonKind(res)))
	}
	c.done(why == "")
}

// scriptLinks reads the item links of an HTML listing page from JSON in
// it, resolved against base.
func (x *Extractor) scriptLinks(r *reader, l *Listing, root *goquery.Selection, base *url.URL) {
	res, why := x.scriptItemLinks.value(r, root)
	set := linkSet{limit: x.spec.Listing.MaxLinks}
	var strs []string
	switch v := res.(type) {
	case string:
		strs = []string{v}
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				strs = append(strs, s)
			}
		}
	}
	for _, s := range strs {
		if link, ok := linkURL(base, s); ok {
			set.add(link, nil)
		}
	}
	l.ItemLinks = append(l.ItemLinks, set.list...)
	l.Dropped += set.dropped
	switch {
	case why != "":
		l.note("item_links", "item_links "+x.scriptItemLinks.describe()+" yields nothing: "+why)
	case len(strs) == 0:
		l.note("item_links", fmt.Sprintf("item_links %s yields %s, not a URL or an array of them", x.scriptItemLinks.describe(), jsonKind(res)))
	}
}

// describe writes the table as a config does.
func (s *scriptSource) describe() string {
	src := fmt.Sprintf("css = %q", s.spec.CSS)
	if s.spec.JS != "" {
		src = fmt.Sprintf("js = %q", s.spec.JS)
	}
	if s.spec.JSON == "" {
		return "{ " + src + " }"
	}
	return fmt.Sprintf("{ %s, json = %q }", src, s.spec.JSON)
}
