package extract

import (
	"fmt"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/databrew/databrew-stage/extract/jsliteral"
)

// A js field reads the value a page's inline scripts assign to a name
// (SPEC 6c, "JSON in JavaScript"): the first assignment, in document order,
// whose value parses (see package jsliteral), then its json expression on
// it, or the whole value. Like jsonld it reads the whole page, also for a
// card or a row on it.

// jsKey names a value assigned in a page.
type jsKey struct {
	doc  *html.Node
	name string
}

// jsValue is what a page's scripts assign to a name, read once per page.
type jsValue struct {
	doc   any
	found bool // some inline script assigns the name
	err   error
}

// jsField reads f from the value the page of root assigns to f's name.
func (r *reader) jsField(f *field, root *goquery.Selection) (any, bool) {
	v := r.jsValueOf(documentOf(root.Nodes[0]), f.jsName)
	switch {
	case !v.found:
		r.miss = fmt.Sprintf("no inline script assigns %s", f.JS)
		return r.nothing(f), false
	case v.err != nil:
		r.miss = fmt.Sprintf("the value assigned to %s does not parse, %v", f.JS, v.err)
		return r.nothing(f), false
	case f.json != nil:
		return r.jsonResult(f, v.doc, " in the value of "+f.JS)
	}
	var out any
	var ok bool
	if f.Multiple {
		out, ok = r.jsonList(f, v.doc)
	} else {
		out, ok = r.jsonScalar(f, v.doc)
	}
	if !ok && r.stats.regexMiss == 0 {
		r.miss = fmt.Sprintf("the value of %s is null or empty", f.JS)
	}
	return out, ok
}

// jsValueOf reads the value the page doc assigns to name, once.
func (r *reader) jsValueOf(doc *html.Node, name string) jsValue {
	key := jsKey{doc, name}
	if v, ok := r.js[key]; ok {
		return v
	}
	var v jsValue
	text, found, err := jsliteral.Find(inlineScripts(doc), name)
	v.found, v.err = found, err
	if text != nil {
		v.doc, v.err = decodeJSON(text)
	}
	if r.js == nil {
		r.js = make(map[jsKey]jsValue)
	}
	r.js[key] = v
	return v
}

// documentOf is the document node n belongs to.
func documentOf(n *html.Node) *html.Node {
	for n.Parent != nil {
		n = n.Parent
	}
	return n
}

// inlineScripts returns the text of every <script> without src under n,
// in document order.
func inlineScripts(n *html.Node) []string {
	var out []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if c.DataAtom == atom.Script {
				if !hasAttr(c, "src") {
					var b strings.Builder
					for t := c.FirstChild; t != nil; t = t.NextSibling {
						if t.Type == html.TextNode {
							b.WriteString(t.Data)
						}
					}
					out = append(out, b.String())
				}
				continue
			}
			walk(c)
		}
	}
	walk(n)
	return out
}

func hasAttr(n *html.Node, name string) bool {
	for _, a := range n.Attr {
		if a.Key == name {
			return true
		}
	}
	return false
}
