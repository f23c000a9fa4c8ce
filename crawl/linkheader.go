package crawl

import (
	"net/http"
	"strings"
)

// nextLink returns the target of the first link in h's Link header fields
// whose rel (a space-separated list, any case) includes "next", as RFC
// 8288 writes it: <URI>; rel="next", <URI2>; rel=prev. The target is as
// written; the caller resolves it. A field that does not parse yields
// nothing from the link it breaks off in.
func nextLink(h http.Header) (string, bool) {
	for _, field := range h.Values("Link") {
		for p := (linkParser{s: field}); ; {
			target, rels, ok := p.next()
			if !ok {
				break
			}
			for _, rel := range strings.Fields(rels) {
				if strings.EqualFold(rel, "next") {
					return target, true
				}
			}
		}
	}
	return "", false
}

// linkParser reads the link-values of one Link header field.
type linkParser struct {
	s string
	i int
}

// next reads the next link-value: its target and its rel parameter's
// value; false at the end of the field, or when the rest does not parse.
func (p *linkParser) next() (target, rel string, ok bool) {
	p.skip(" \t,")
	if p.i >= len(p.s) || p.s[p.i] != '<' {
		return "", "", false
	}
	end := strings.IndexByte(p.s[p.i:], '>')
	if end < 0 {
		return "", "", false
	}
	target = strings.TrimSpace(p.s[p.i+1 : p.i+end])
	p.i += end + 1
	for {
		p.skip(" \t")
		if p.i >= len(p.s) || p.s[p.i] == ',' {
			return target, rel, true
		}
		if p.s[p.i] != ';' {
			return "", "", false
		}
		p.i++
		p.skip(" \t")
		name := p.token()
		p.skip(" \t")
		value := ""
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			p.skip(" \t")
			var vok bool
			if value, vok = p.value(); !vok {
				return "", "", false
			}
		}
		if strings.EqualFold(name, "rel") && rel == "" {
			rel = value // the first rel counts (RFC 8288 section 3.3)
		}
	}
}

func (p *linkParser) skip(chars string) {
	for p.i < len(p.s) && strings.IndexByte(chars, p.s[p.i]) >= 0 {
		p.i++
	}
}

// token reads an RFC 9110 token.
func (p *linkParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// value reads a token or a quoted string, unescaping the latter.
func (p *linkParser) value() (string, bool) {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return p.token(), true
	}
	var b strings.Builder
	for p.i++; p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; c {
		case '"':
			p.i++
			return b.String(), true
		case '\\':
			if p.i+1 < len(p.s) {
				p.i++
				b.WriteByte(p.s[p.i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

func isTokenChar(c byte) bool {
	if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
