package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
)

// reader reads the fields of one page. It is not safe for concurrent use;
// readers and their text buffers are pooled between pages.
type reader struct {
	x       *Extractor
	base    *url.URL
	w       normalizer
	reasons []string
	// stats count, for the current field, regex misses, values and
	// elements it could not use, and among them values its type does not
	// take (type errors).
	stats struct{ regexMiss, bad, typeErr int }
	// badReason explains the current field's first value that did not
	// parse, and badValue is that value; miss why it found nothing, when
	// no value was bad.
	badReason string
	badValue  string
	miss      string
	// Per page: the JSON-LD of each root, the JSON text of elements read
	// with css and json, and float64 copies of objects (see jsonExpr).
	ld     map[*html.Node]*ldBlocks
	parsed map[parsedKey]parsedJSON
	js     map[jsKey]jsValue
	floats floatCopies
}

// parsedKey names the JSON an element holds: its text or an attribute.
type parsedKey struct {
	n    *html.Node
	attr string
}

// parsedJSON is the JSON of an element, decoded once per page.
type parsedJSON struct {
	v     any
	err   error
	found bool // the element has the attribute and the text is not blank
}

var readerPool = sync.Pool{New: func() any { return &reader{w: normalizer{b: make([]byte, 0, 512)}} }}

func newReader(x *Extractor, base *url.URL) *reader {
	r := readerPool.Get().(*reader)
	r.x, r.base = x, base
	return r
}

// release returns r to the pool; r must not be used afterwards.
func (r *reader) release() {
	r.x, r.base, r.reasons = nil, nil, nil
	r.badReason, r.badValue, r.miss = "", "", ""
	clear(r.ld)
	clear(r.parsed)
	clear(r.js)
	clear(r.floats)
	if cap(r.w.b) > 64<<10 {
		r.w.b = make([]byte, 0, 512)
	}
	readerPool.Put(r)
}

// htmlField reads f under root, the row, the card or the page.
func (r *reader) htmlField(f *field, root *goquery.Selection) (any, bool) {
	switch {
	case f.JSONLD != "":
		return r.ldField(f, root)
	case f.JS != "":
		return r.jsField(f, root)
	case len(f.sels) == 0:
		r.miss = "json alone reads a JSON document, and this page is HTML"
		return r.nothing(f), false
	case f.Multiple:
		return r.htmlList(f, root)
	}
	matched := false
	for i := range f.sels {
		v, present, m := r.first(f, &f.sels[i], root)
		if present {
			return v, true
		}
		matched = matched || m
	}
	r.miss = r.cssMiss(f, matched)
	return nil, false
}

// first returns f's value from what sel matches under root: the first
// matching element that yields one. The common case, where the very first
// match does, stops the document walk there.
func (r *reader) first(f *field, sel *selector, root *goquery.Selection) (v any, present, matched bool) {
	nodes := sel.nodes(root, true)
	if len(nodes) == 0 {
		return nil, false, false
	}
	if v, ok := r.nodeValue(f, nodes[0]); ok || sel.scope {
		return v, ok, true
	}
	all := sel.nodes(root, false)
	if len(all) > 0 && all[0] == nodes[0] {
		all = all[1:]
	}
	for _, n := range all {
		if v, ok := r.nodeValue(f, n); ok {
			return v, true, true
		}
	}
	return nil, false, true
}

// nodeValue returns f's value from element n, if it yields one.
func (r *reader) nodeValue(f *field, n *html.Node) (any, bool) {
	if f.json != nil {
		doc, ok := r.nodeJSON(f, n)
		if !ok {
			return nil, false
		}
		res, ok := r.search(f, doc)
		if !ok {
			return nil, false
		}
		return r.jsonScalar(f, res)
	}
	s, ok := r.text(f, n)
	if !ok {
		return nil, false
	}
	return r.typed(f, s)
}

// htmlList returns f's list from the first selector whose matches yield a
// value, else an empty list.
func (r *reader) htmlList(f *field, root *goquery.Selection) (any, bool) {
	matched := false
	for i := range f.sels {
		nodes := f.sels[i].nodes(root, false)
		if len(nodes) == 0 {
			continue
		}
		matched = true
		if v, present := r.list(f, nodes); present {
			return v, true
		}
	}
	r.miss = r.cssMiss(f, matched)
	return r.nothing(f), false
}

// nothing is what a field that finds nothing holds before its default:
// nil, or an empty list.
func (r *reader) nothing(f *field) any {
	if !f.Multiple {
		return nil
	}
	v, _ := r.list(f, nil)
	return v
}

// text returns the normalised value of n for f, cut by f's regex; false
// when it is missing or empty.
func (r *reader) text(f *field, n *html.Node) (string, bool) {
	r.w.reset()
	if !r.w.writeNode(n, f.attr) {
		return "", false
	}
	v := r.w.b
	if f.re != nil && len(v) > 0 {
		loc := f.re.FindSubmatchIndex(v)
		switch {
		case loc == nil || len(loc) >= 4 && loc[2] < 0:
			r.stats.regexMiss++
			return "", false
		case len(loc) >= 4:
			v = v[loc[2]:loc[3]]
		default:
			v = v[loc[0]:loc[1]]
		}
		v = bytes.Trim(v, " ")
	}
	if len(v) == 0 {
		return "", false
	}
	return string(v), true
}

// nodeJSON returns the JSON in n's text or f's attribute, decoded once per
// page; false when there is none or it is not JSON (a bad value of f).
func (r *reader) nodeJSON(f *field, n *html.Node) (any, bool) {
	key := parsedKey{n, f.attr}
	p, ok := r.parsed[key]
	if !ok {
		r.w.reset()
		if r.w.writeRaw(n, f.attr) && len(bytes.TrimSpace(r.w.b)) > 0 {
			p.found = true
			p.v, p.err = decodeFirstJSON(string(r.w.b))
		}
		if r.parsed == nil {
			r.parsed = make(map[parsedKey]parsedJSON)
		}
		r.parsed[key] = p
	}
	if p.err != nil {
		what := "text"
		if f.attr != "" {
			what = "attribute " + f.attr
		}
		r.noteProblem(f, fmt.Sprintf("%s: the %s of a matched element is not JSON: %v", f.Name, what, p.err))
		return nil, false
	}
	return p.v, p.found
}

// search evaluates f's expression on doc; an error is a bad value of f.
func (r *reader) search(f *field, doc any) (any, bool) {
	res, err := f.json.search(doc, &r.floats)
	if err != nil {
		r.noteProblem(f, fmt.Sprintf("%s: %v", f.Name, err))
		return nil, false
	}
	return res, true
}

// list returns every value of nodes as a typed, never nil, slice; values
// that do not parse are skipped with a reason. present is false for an
// empty list.
func (r *reader) list(f *field, nodes []*html.Node) (v any, present bool) {
	if f.json != nil {
		var vals []any
		for _, n := range nodes {
			doc, ok := r.nodeJSON(f, n)
			if !ok {
				continue
			}
			res, ok := r.search(f, doc)
			if arr, isArr := res.([]any); isArr {
				vals = append(vals, arr...)
			} else if ok && res != nil {
				vals = append(vals, res)
			}
		}
		return r.jsonList(f, vals)
	}
	switch f.Type {
	case TypeInt64:
		l := collect(r, f, nodes, func(s string) (int64, bool) { return readInt(s, f.comma) })
		return l, len(l) > 0
	case TypeFloat64:
		l := collect(r, f, nodes, func(s string) (float64, bool) { return readFloat(s, f.comma) })
		return l, len(l) > 0
	case TypeBool:
		l := collect(r, f, nodes, parseBool)
		return l, len(l) > 0
	case TypeTimestamp:
		l := collect(r, f, nodes, func(s string) (time.Time, bool) { return parseTime(s, f.Format) })
		return l, len(l) > 0
	default:
		l := collect(r, f, nodes, func(s string) (string, bool) { return r.str(f, s) })
		return l, len(l) > 0
	}
}

// collect parses the value of every node, in document order, skipping
// empty values and recording unparsable ones.
func collect[T any](r *reader, f *field, nodes []*html.Node, parse func(string) (T, bool)) []T {
	out := make([]T, 0, len(nodes))
	for _, n := range nodes {
		s, ok := r.text(f, n)
		if !ok {
			continue
		}
		if f.mapping != nil {
			if to, ok := f.mapping.lookup(s); ok {
				if !to.isText {
					out = append(out, to.value.(T))
					continue
				}
				s = to.text
			}
		}
		v, ok := parse(s)
		if !ok {
			r.noteBad(f, s)
			continue
		}
		out = append(out, v)
	}
	return out
}

// cssMiss says why a css field found nothing.
func (r *reader) cssMiss(f *field, matched bool) string {
	switch {
	case !matched:
		quoted := make([]string, len(f.CSS))
		for i, css := range f.CSS {
			quoted[i] = fmt.Sprintf("%q", css)
		}
		return "no element matches " + strings.Join(quoted, " or ")
	case r.stats.regexMiss > 0:
		return fmt.Sprintf("regex %q does not match", f.Regex)
	case f.Attr != "":
		if f.json != nil {
			return fmt.Sprintf("json %q yields nothing in the matched elements' %q attribute", f.JSON, f.Attr)
		}
		return fmt.Sprintf("matched elements have no %q attribute value", f.Attr)
	case f.json != nil:
		return fmt.Sprintf("json %q yields nothing in the matched elements", f.JSON)
	}
	return "matched elements have no text"
}

// ldField reads f from the JSON-LD under root.
func (r *reader) ldField(f *field, root *goquery.Selection) (any, bool) {
	n := root.Nodes[0]
	ld, ok := r.ld[n]
	if !ok {
		ld = readLD(root, &r.w)
		if r.ld == nil {
			r.ld = make(map[*html.Node]*ldBlocks)
		}
		r.ld[n] = ld
	}
	obj := ld.find(f.JSONLD)
	if obj == nil {
		switch {
		case len(ld.blocks) == 0 && ld.bad == 0:
			r.miss = fmt.Sprintf("no JSON-LD object of @type %q: no JSON-LD script here", f.JSONLD)
		case ld.bad > 0:
			r.miss = fmt.Sprintf("no JSON-LD object of @type %q (%d JSON-LD scripts are not JSON)", f.JSONLD, ld.bad)
		default:
			r.miss = fmt.Sprintf("no JSON-LD object of @type %q", f.JSONLD)
		}
		return r.nothing(f), false
	}
	return r.jsonResult(f, obj, fmt.Sprintf(" on the %s JSON-LD object", f.JSONLD))
}

// jsonField reads f from a JSON root: the row, the card or the page.
func (r *reader) jsonField(f *field, root any) (any, bool) {
	if f.json == nil || len(f.sels) > 0 || f.JSONLD != "" || f.JS != "" {
		r.miss = "css and jsonld read HTML, and this is a JSON document"
		return r.nothing(f), false
	}
	return r.jsonResult(f, root, "")
}

// jsonResult evaluates f's expression on doc and returns its value.
func (r *reader) jsonResult(f *field, doc any, where string) (any, bool) {
	res, ok := r.search(f, doc)
	var v any
	switch {
	case !ok:
		return r.nothing(f), false
	case f.Multiple:
		v, ok = r.jsonList(f, res)
	default:
		v, ok = r.jsonScalar(f, res)
	}
	if !ok {
		if r.stats.regexMiss > 0 {
			r.miss = fmt.Sprintf("regex %q does not match", f.Regex)
		} else {
			r.miss = fmt.Sprintf("json %q yields nothing%s", f.JSON, where)
		}
	}
	return v, ok
}
