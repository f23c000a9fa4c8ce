package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"sync"
	"time"
	"unicode/utf8"

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
	stats   struct{ regexMiss, bad int }
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
	if cap(r.w.b) > 64<<10 {
		r.w.b = make([]byte, 0, 512)
	}
	readerPool.Put(r)
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

// first returns f's value under root: the first matching element whose
// value is non-empty and parses. The common case, where the very first
// match does, stops the document walk there.
func (r *reader) first(f *field, root *goquery.Selection) (v any, present, matched bool) {
	nodes := root.FindMatcher(f.first).Nodes
	if len(nodes) == 0 {
		return nil, false, false
	}
	if s, ok := r.text(f, nodes[0]); ok {
		if v, ok := r.convert(f, s); ok {
			return v, true, true
		}
	}
	v, present = r.scalar(f, root.FindMatcher(f.sel).Nodes)
	return v, present, true
}

// scalar returns the first value of nodes that is non-empty and parses.
func (r *reader) scalar(f *field, nodes []*html.Node) (any, bool) {
	bad, nbad := "", 0
	for _, n := range nodes {
		s, ok := r.text(f, n)
		if !ok {
			continue
		}
		if v, ok := r.convert(f, s); ok {
			return v, true
		}
		if nbad == 0 {
			bad = s
		}
		nbad++
	}
	if nbad > 0 {
		r.stats.bad += nbad
		r.reject(f, bad)
	}
	return nil, false
}

// convert parses s as f's type.
func (r *reader) convert(f *field, s string) (any, bool) {
	switch f.Type {
	case TypeInt64:
		if v, ok := parseInt(s); ok {
			return v, true
		}
	case TypeFloat64:
		if v, ok := parseFloat(s); ok {
			return v, true
		}
	case TypeBool:
		if v, ok := parseBool(s); ok {
			return v, true
		}
	case TypeTimestamp:
		if v, ok := parseTime(s, f.Format); ok {
			return v, true
		}
	default:
		return r.str(f, s)
	}
	return nil, false
}

// str returns a string value, resolved against the base URL for URL fields.
func (r *reader) str(f *field, s string) (string, bool) {
	if !f.URL {
		return s, true
	}
	u, err := resolve(r.base, s)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

// list returns every value of nodes as a typed, never nil, slice; unparsable
// elements are skipped with a reason. present is false for an empty list.
func (r *reader) list(f *field, nodes []*html.Node) (v any, present bool) {
	switch f.Type {
	case TypeInt64:
		l := collect(r, f, nodes, parseInt)
		return l, len(l) > 0
	case TypeFloat64:
		l := collect(r, f, nodes, parseFloat)
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
		v, ok := parse(s)
		if !ok {
			r.stats.bad++
			r.reject(f, s)
			continue
		}
		out = append(out, v)
	}
	return out
}

// reject records a value of f that did not parse.
func (r *reader) reject(f *field, s string) {
	const max = 64
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	what := "a valid " + string(f.Type)
	if f.Type == TypeString {
		what = "a valid URL"
	} else if f.Type == TypeTimestamp && f.Format != "" {
		what = fmt.Sprintf("a timestamp in format %q", f.Format)
	}
	r.reasons = append(r.reasons, fmt.Sprintf("%s: %q is not %s", f.Name, s, what))
}

// explain records why a required field has no value, unless reject did.
func (r *reader) explain(f *field, matched bool) {
	switch {
	case r.stats.bad > 0:
	case !matched:
		r.reasons = append(r.reasons, fmt.Sprintf("%s: no element matches %q", f.Name, f.CSS))
	case r.stats.regexMiss > 0:
		r.reasons = append(r.reasons, fmt.Sprintf("%s: regex %q does not match", f.Name, f.Regex))
	case f.Attr != "":
		r.reasons = append(r.reasons, fmt.Sprintf("%s: matched elements have no %q attribute value", f.Name, f.Attr))
	default:
		r.reasons = append(r.reasons, fmt.Sprintf("%s: matched elements have no text", f.Name))
	}
}
