package htmltree

// The tree rules: where each start and end tag puts its element, as the
// HTML5 algorithm's insertion modes do for plain markup, and where they
// would do otherwise (the builder then gives up).

import (
	"slices"
	"strings"

	"golang.org/x/net/html"
	a "golang.org/x/net/html/atom"
)

// startTag applies a start tag.
func (b *builder) startTag(t html.Token) bool {
	switch b.mode {
	case beforeHTML:
		if t.DataAtom != a.Html {
			return false
		}
		b.push(b.doc, t)
		b.mode = beforeHead
		return true
	case beforeHead:
		if t.DataAtom != a.Head {
			return false
		}
		b.push(b.top(), t)
		b.mode = inHead
		return true
	case inHead:
		return b.headElement(t, inHead)
	case afterHead:
		if t.DataAtom != a.Body {
			return false
		}
		b.push(b.top(), t)
		b.mode = inBody
		return true
	case inBody:
		if b.tableContext() {
			return b.tableStartTag(t)
		}
		return b.bodyStartTag(t)
	}
	return false
}

// headElement adds the elements of <head>, which may also appear in the
// body, and starts the text of those that have text; back is the mode
// their end tag returns to.
func (b *builder) headElement(t html.Token, back mode) bool {
	switch t.DataAtom {
	case a.Base, a.Basefont, a.Bgsound, a.Link, a.Meta:
		b.add(t)
		return true
	case a.Script, a.Title, a.Style, a.Noframes, a.Noscript:
		// html.Parse runs with scripting on: <noscript> holds text.
		return b.startText(t, back)
	}
	return false
}

// startText opens an element whose content the tokenizer reads as text.
func (b *builder) startText(t html.Token, back mode) bool {
	b.push(b.top(), t)
	b.mode, b.textReturn = text, back
	return true
}

// bodyStartTag applies a start tag in the body, outside a table's
// structure (inside a cell the same rules hold).
func (b *builder) bodyStartTag(t html.Token) bool {
	switch t.DataAtom {
	case a.Base, a.Basefont, a.Bgsound, a.Link, a.Meta, a.Script, a.Title, a.Style, a.Noframes, a.Noscript:
		return b.headElement(t, inBody)
	case a.Address, a.Article, a.Aside, a.Blockquote, a.Center, a.Details, a.Dialog, a.Dir, a.Div, a.Dl,
		a.Fieldset, a.Figcaption, a.Figure, a.Footer, a.Header, a.Hgroup, a.Main, a.Menu, a.Nav, a.Ol, a.P,
		a.Search, a.Section, a.Summary, a.Ul, a.Pre, a.Listing, a.Table:
		// These close an open <p>: left to html.Parse.
		if b.inScope(a.P, true) {
			return false
		}
	case a.H1, a.H2, a.H3, a.H4, a.H5, a.H6:
		if b.inScope(a.P, true) || isHeading(b.top().DataAtom) {
			return false
		}
	case a.Form:
		if b.form || b.inScope(a.P, true) {
			return false
		}
		b.form = true
	case a.Li:
		if b.closesListItem(a.Li) || b.inScope(a.P, true) {
			return false
		}
	case a.Dd, a.Dt:
		if b.closesListItem(a.Dd, a.Dt) || b.inScope(a.P, true) {
			return false
		}
	case a.Button:
		if b.inScope(a.Button, false) {
			return false
		}
	case a.A, a.Nobr:
		// A second one closes the first: left to html.Parse.
		if b.isOpen(t.DataAtom) {
			return false
		}
		sortAttributes(t.Attr)
	case a.B, a.Big, a.Code, a.Em, a.Font, a.I, a.S, a.Small, a.Strike, a.Strong, a.Tt, a.U:
		// html.Parse sorts a formatting element's attributes.
		sortAttributes(t.Attr)
	case a.Area, a.Br, a.Embed, a.Img, a.Keygen, a.Wbr, a.Input, a.Param, a.Source, a.Track:
		b.add(t)
		return true
	case a.Hr:
		if b.inScope(a.P, true) {
			return false
		}
		b.add(t)
		return true
	case a.Textarea, a.Iframe, a.Noembed:
		return b.startText(t, inBody)
	case a.Xmp:
		if b.inScope(a.P, true) {
			return false
		}
		return b.startText(t, inBody)
	case a.Html, a.Body, a.Head, a.Frameset, a.Frame, a.Template, a.Plaintext, a.Image, a.Select, a.Option,
		a.Optgroup, a.Rb, a.Rtc, a.Rp, a.Rt, a.Math, a.Svg, a.Caption, a.Col, a.Colgroup, a.Tbody, a.Td,
		a.Tfoot, a.Th, a.Thead, a.Tr:
		return false
	}
	return b.push(b.top(), t)
}

// tableStartTag applies a start tag inside a table's structure: a table,
// its sections and its rows. A row directly in a table implies its
// <tbody>; anything else but sections, rows and cells would be moved
// out of the table by html.Parse.
func (b *builder) tableStartTag(t html.Token) bool {
	top := b.top().DataAtom
	switch {
	case top == a.Table && (t.DataAtom == a.Tbody || t.DataAtom == a.Thead || t.DataAtom == a.Tfoot):
	case top == a.Table && t.DataAtom == a.Tr:
		if !b.push(b.top(), html.Token{Type: html.StartTagToken, DataAtom: a.Tbody, Data: "tbody"}) {
			return false
		}
	case (top == a.Tbody || top == a.Thead || top == a.Tfoot) && t.DataAtom == a.Tr:
	case top == a.Tr && (t.DataAtom == a.Td || t.DataAtom == a.Th):
	default:
		return false
	}
	return b.push(b.top(), t)
}

// endTag applies an end tag: it must close the element open last.
func (b *builder) endTag(t html.Token) bool {
	top := b.top()
	switch b.mode {
	case inHead:
		if t.DataAtom != a.Head {
			return false
		}
		b.pop()
		b.mode = afterHead
		return true
	case text:
		// The tokenizer ends a text element's content only at its own
		// end tag.
		b.pop()
		b.mode = b.textReturn
		return true
	case afterBody:
		if t.DataAtom != a.Html {
			return false
		}
		b.mode = afterAfterBody
		return true
	case inBody:
	default:
		return false
	}
	switch {
	case t.DataAtom == a.Body || t.DataAtom == a.Html:
		// </body> leaves the body open; what follows, whitespace only,
		// still goes into it.
		if top.DataAtom != a.Body {
			return false
		}
		b.mode = afterBody
		if t.DataAtom == a.Html {
			b.mode = afterAfterBody
		}
		return true
	case t.DataAtom == a.Table && b.tableContext():
		// </table> closes the table's open sections and rows.
		for b.top().DataAtom != a.Table {
			b.pop()
		}
		b.pop()
		return true
	case t.DataAtom != top.DataAtom || t.DataAtom == 0 && t.Data != top.Data:
		return false
	}
	switch t.DataAtom {
	case a.Form:
		b.form = false
	case a.Br:
		return false // html.Parse reads </br> as <br>
	}
	b.pop()
	return true
}

// tableContext reports whether the current element is a table, one of
// its sections or a row, where html.Parse's table rules apply.
func (b *builder) tableContext() bool {
	switch b.top().DataAtom {
	case a.Table, a.Tbody, a.Thead, a.Tfoot, a.Tr:
		return true
	}
	return false
}

// add adds a void element to the current element.
func (b *builder) add(t html.Token) {
	b.top().AppendChild(b.element(t))
}

// push adds an element to parent and opens it.
func (b *builder) push(parent *html.Node, t html.Token) bool {
	if len(b.open) >= maxDepth {
		return false
	}
	n := b.element(t)
	parent.AppendChild(n)
	b.open = append(b.open, n)
	return true
}

// element is the node of a start tag.
func (b *builder) element(t html.Token) *html.Node {
	return b.node(html.Node{Type: html.ElementNode, DataAtom: t.DataAtom, Data: t.Data, Attr: t.Attr})
}

func (b *builder) pop() { b.open = b.open[:len(b.open)-1] }

// top is the current element, or the document before <html>.
func (b *builder) top() *html.Node {
	if len(b.open) == 0 {
		return b.doc
	}
	return b.open[len(b.open)-1]
}

// inScope reports whether an element of this kind is open in scope: up
// to the nearest element that bounds a scope (a table, a cell, a button
// in the button scope, and the like).
func (b *builder) inScope(atom a.Atom, button bool) bool {
	for i := len(b.open) - 1; i >= 0; i-- {
		switch b.open[i].DataAtom {
		case atom:
			return true
		case a.Applet, a.Caption, a.Html, a.Table, a.Td, a.Th, a.Marquee, a.Object, a.Template:
			return false
		case a.Button:
			if button {
				return false
			}
		}
	}
	return false
}

// isOpen reports whether an element of this kind is open.
func (b *builder) isOpen(atom a.Atom) bool {
	return slices.ContainsFunc(b.open, func(n *html.Node) bool { return n.DataAtom == atom })
}

// closesListItem reports whether a new <li> (or <dd>, <dt>) would close
// an open one, as html.Parse finds it: the nearest of kinds open, unless
// a special element other than <address>, <div> and <p> comes first.
func (b *builder) closesListItem(kinds ...a.Atom) bool {
	for i := len(b.open) - 1; i >= 0; i-- {
		n := b.open[i]
		switch {
		case slices.Contains(kinds, n.DataAtom):
			return true
		case n.DataAtom == a.Address || n.DataAtom == a.Div || n.DataAtom == a.P:
		case isSpecial(n.Data):
			return false
		}
	}
	return false
}

// isHeading reports whether the element is one of <h1> to <h6>.
func isHeading(atom a.Atom) bool {
	switch atom {
	case a.H1, a.H2, a.H3, a.H4, a.H5, a.H6:
		return true
	}
	return false
}

// sortAttributes orders attributes as html.Parse orders those of a
// formatting element.
func sortAttributes(attr []html.Attribute) {
	slices.SortFunc(attr, func(x, y html.Attribute) int {
		if c := strings.Compare(x.Namespace, y.Namespace); c != 0 {
			return c
		}
		if c := strings.Compare(x.Key, y.Key); c != 0 {
			return c
		}
		return strings.Compare(x.Val, y.Val)
	})
}

// isWhitespace reports whether raw is whitespace only.
func isWhitespace(raw string) bool {
	return strings.Trim(raw, whitespace) == ""
}

// isSpecial reports whether an element is in the HTML5 algorithm's
// special category, as html.Parse lists it.
func isSpecial(name string) bool { return special[name] }

var special = map[string]bool{
	"address": true, "applet": true, "area": true, "article": true, "aside": true, "base": true,
	"basefont": true, "bgsound": true, "blockquote": true, "body": true, "br": true, "button": true,
	"caption": true, "center": true, "col": true, "colgroup": true, "dd": true, "details": true,
	"dir": true, "div": true, "dl": true, "dt": true, "embed": true, "fieldset": true,
	"figcaption": true, "figure": true, "footer": true, "form": true, "frame": true, "frameset": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true, "head": true,
	"header": true, "hgroup": true, "hr": true, "html": true, "iframe": true, "img": true,
	"input": true, "keygen": true, "li": true, "link": true, "listing": true, "main": true,
	"marquee": true, "menu": true, "meta": true, "nav": true, "noembed": true, "noframes": true,
	"noscript": true, "object": true, "ol": true, "p": true, "param": true, "plaintext": true,
	"pre": true, "script": true, "section": true, "select": true, "source": true, "style": true,
	"summary": true, "table": true, "tbody": true, "td": true, "template": true, "textarea": true,
	"tfoot": true, "th": true, "thead": true, "title": true, "tr": true, "track": true, "ul": true,
	"wbr": true, "xmp": true,
}
