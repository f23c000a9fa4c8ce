package htmltree

import (
	"strings"

	"golang.org/x/net/html"
	a "golang.org/x/net/html/atom"
)

// The scanner reads the document as html.Tokenizer would, for plain
// markup only: each read below gives up (returns false) where the
// tokenizer's rules differ from the plain reading, which the tests check
// token by token against the tokenizer.

// scan reads the document into the builder; false means it is not in
// the subset.
func (b *builder) scan() bool {
	src := b.src
	if strings.IndexByte(src, 0) >= 0 {
		return false // the tokenizer and parser replace or drop NULs
	}
	for b.pos < len(src) {
		if b.mode == text {
			if !b.textElement() {
				return false
			}
			continue
		}
		lt := strings.IndexByte(src[b.pos:], '<')
		if lt < 0 {
			return b.text(src[b.pos:], false)
		}
		if lt > 0 && !b.text(src[b.pos:b.pos+lt], false) {
			return false
		}
		b.pos += lt
		var ok bool
		switch c := byteAt(src, b.pos+1); {
		case isLetter(c):
			ok = b.readStartTag()
		case c == '/' && isLetter(byteAt(src, b.pos+2)):
			ok = b.readEndTag()
		case c == '!':
			ok = b.readMarkup()
		case c == '/' || c == '?':
			return false // bogus comments
		default:
			// A '<' that starts no tag is text.
			ok = b.text("<", false)
			b.pos++
		}
		if !ok {
			return false
		}
	}
	return true
}

// readStartTag reads the start tag at b.pos and applies it.
func (b *builder) readStartTag() bool {
	src := b.src
	t := html.Token{Type: html.StartTagToken}
	var i int
	t.DataAtom, t.Data, i = b.tagName(b.pos + 1)
	attrStart := len(b.attrs)
	for {
		for i < len(src) && (isSpace(src[i]) || src[i] == '/') {
			i++ // a '/' between attributes is skipped, as the tokenizer does
		}
		if i >= len(src) {
			return false
		}
		if src[i] == '>' {
			i++
			break
		}
		// The key runs to whitespace, '/', '>' or '='.
		k := i
		for i < len(src) && !isSpace(src[i]) && src[i] != '/' && src[i] != '>' && src[i] != '=' {
			i++
		}
		if i == k || i >= len(src) {
			return false // "<a =x>": the tokenizer keeps the '=' in the key
		}
		key := src[k:i]
		for i < len(src) && isSpace(src[i]) {
			i++
		}
		val := ""
		if i < len(src) && src[i] == '=' {
			i++
			for i < len(src) && isSpace(src[i]) {
				i++
			}
			if i >= len(src) {
				return false
			}
			switch q := src[i]; q {
			case '"', '\'':
				e := strings.IndexByte(src[i+1:], q)
				if e < 0 {
					return false
				}
				val = src[i+1 : i+1+e]
				i += e + 2
			case '>':
				// "<a b=>": an empty value.
			default:
				v := i
				for i < len(src) && !isSpace(src[i]) && src[i] != '>' {
					i++
				}
				if i >= len(src) {
					return false
				}
				val = src[v:i]
			}
		}
		var ok bool
		if val, ok = attributeValue(val); !ok {
			return false
		}
		keyName := b.attrKey(key)
		if !b.hasAttr(attrStart, keyName) { // the tokenizer keeps the first of a key
			attrStart = b.addAttr(attrStart, html.Attribute{Key: keyName, Val: val})
		}
	}
	if n := len(b.attrs) - attrStart; n > 0 {
		t.Attr = b.attrs[attrStart:len(b.attrs):len(b.attrs)]
	}
	b.pos = i
	if t.DataAtom == a.Plaintext {
		return false
	}
	return b.startTag(t)
}

// attrBlock is how many attributes one allocation holds.
const attrBlock = 64

// addAttr appends an attribute to those of the tag being read, which
// start at b.attrs[from], and returns where they start: a tag's
// attributes are kept side by side, in a new block when the last is full.
func (b *builder) addAttr(from int, at html.Attribute) int {
	if len(b.attrs) == cap(b.attrs) {
		tag := b.attrs[from:]
		block := b.attrBlock(max(attrBlock, 2*len(tag)))
		b.attrs, from = append(block, tag...), 0
	}
	b.attrs = append(b.attrs, at)
	return from
}

// hasAttr reports whether the tag being read, whose attributes start at
// b.attrs[from], has one with this key.
func (b *builder) hasAttr(from int, key string) bool {
	for _, at := range b.attrs[from:] {
		if at.Key == key {
			return true
		}
	}
	return false
}

// readEndTag reads the end tag at b.pos and applies it. An end tag with
// anything but whitespace after its name is left to the tokenizer.
func (b *builder) readEndTag() bool {
	src := b.src
	t := html.Token{Type: html.EndTagToken}
	var i int
	t.DataAtom, t.Data, i = b.tagName(b.pos + 2)
	for i < len(src) && isSpace(src[i]) {
		i++
	}
	if i >= len(src) || src[i] != '>' {
		return false
	}
	b.pos = i + 1
	return b.endTag(t)
}

// readMarkup reads the comment or doctype at b.pos ("<!") and applies
// it; CDATA sections and bogus comments are left to the tokenizer.
func (b *builder) readMarkup() bool {
	src := b.src[b.pos:]
	if strings.HasPrefix(src, "<!--") {
		body := src[len("<!--"):]
		e := strings.Index(body, "-->")
		if e < 0 {
			return false
		}
		data := body[:e]
		// The tokenizer ends a comment early at "--!>", and at once after
		// "<!-->" or "<!--->".
		if strings.HasPrefix(data, ">") || strings.HasPrefix(data, "-") || strings.HasSuffix(data, "-") || strings.Contains(data, "--!") {
			return false
		}
		b.pos += len("<!--") + e + len("-->")
		return b.comment(convertNewlines(data))
	}
	const doctype = "<!doctype"
	if len(src) < len(doctype) || !strings.EqualFold(src[:len(doctype)], doctype) {
		return false
	}
	e := strings.IndexByte(src, '>')
	if e < 0 {
		return false
	}
	// Only <!DOCTYPE html>: a public or system identifier, or another
	// name, becomes attributes of the node or quirks mode.
	if !strings.EqualFold(strings.Trim(src[len(doctype):e], whitespace), "html") || !isSpace(src[len(doctype)]) {
		return false
	}
	b.pos += e + 1
	return b.doctype()
}

// textElement reads the content of the open text element up to its end
// tag, and the end tag.
func (b *builder) textElement() bool {
	src := b.src
	top := b.top()
	name := top.Data
	i := b.pos
	for {
		e := strings.Index(src[i:], "</")
		if e < 0 {
			return false // the element runs to the end of the document
		}
		i += e
		n := i + 2 + len(name)
		if n < len(src) && strings.EqualFold(src[i+2:n], name) && (isSpace(src[n]) || src[n] == '/' || src[n] == '>') {
			break
		}
		i += 2
	}
	content := src[b.pos:i]
	switch top.DataAtom {
	case a.Script:
		// "<!--" in a script starts the escaped states, in which the end
		// tag is found by other rules.
		if strings.Contains(content, "<!--") {
			return false
		}
	}
	if content != "" {
		rcdata := top.DataAtom == a.Title || top.DataAtom == a.Textarea
		if !b.text(content, !rcdata) {
			return false
		}
	}
	b.pos = i
	return b.readEndTag()
}

// tagName reads the tag name that starts at i: its atom, its name and
// where it ends (whitespace, '/' or '>').
func (b *builder) tagName(i int) (a.Atom, string, int) {
	end := i
	for end < len(b.src) && !isTagNameEnd(b.src[end]) {
		end++
	}
	atom, name := b.name(b.src[i:end])
	return atom, name, end
}

// name returns a tag's atom and name, lower-cased as the tokenizer does.
func (b *builder) name(s string) (a.Atom, string) {
	s = lower(s)
	if atom := a.Lookup([]byte(s)); atom != 0 {
		return atom, atom.String()
	}
	return 0, s
}

// attrKey returns an attribute's key, lower-cased.
func (b *builder) attrKey(s string) string {
	s = lower(s)
	if atom := a.Lookup([]byte(s)); atom != 0 {
		return atom.String()
	}
	return s
}

// attributeValue returns an attribute's value with its character
// references replaced. The tokenizer reads a reference in an attribute as
// in text when the reference ends with ';' and names a character whole
// (or is numeric): in text, but not in an attribute, it also reads a
// named reference that only starts with a character's name ("&notit;"
// as "¬it;"). Values with any other reference are left to the tokenizer.
func attributeValue(v string) (string, bool) {
	if strings.IndexByte(v, '\r') >= 0 {
		v = convertNewlines(v)
	}
	amp := strings.IndexByte(v, '&')
	if amp < 0 {
		return v, true
	}
	for rest := v[amp:]; rest != ""; {
		n := wholeReference(rest)
		if n == 0 {
			return "", false
		}
		next := strings.IndexByte(rest[n:], '&')
		if next < 0 {
			break
		}
		rest = rest[n+next:]
	}
	return html.UnescapeString(v), true
}

// wholeReference returns the length of the character reference s starts
// with when it ends with ';' and is numeric or names a character whole,
// else 0.
func wholeReference(s string) int {
	i := 1
	numeric := strings.HasPrefix(s, "&#")
	hex := false
	if numeric {
		i = 2
		if i < len(s) && (s[i] == 'x' || s[i] == 'X') {
			i, hex = 3, true
		}
	}
	start := i
	for i < len(s) && (isDigit(s[i]) || (hex || !numeric) && isHexLetter(s[i]) || !numeric && isLetter(s[i])) {
		i++
	}
	if i == start || i >= len(s) || s[i] != ';' {
		return 0
	}
	ref := s[:i+1]
	// A name read whole leaves no ';' behind; a prefix of a name, or none,
	// leaves it (and so does &semi;, left to the tokenizer).
	if !numeric && strings.HasSuffix(html.UnescapeString(ref), ";") {
		return 0
	}
	return i + 1
}

// convertNewlines turns "\r\n" and a lone "\r" into "\n", as the
// tokenizer does for text, comments and attribute values.
func convertNewlines(s string) string {
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func isLetter(c byte) bool    { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool     { return '0' <= c && c <= '9' }
func isHexLetter(c byte) bool { return 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// isSpace reports whether c is whitespace to the tokenizer.
func isSpace(c byte) bool {
	switch c {
	case ' ', '\n', '\r', '\t', '\f':
		return true
	}
	return false
}

// isTagNameEnd reports whether c ends a tag name.
func isTagNameEnd(c byte) bool { return isSpace(c) || c == '/' || c == '>' }

// lower lower-cases the ASCII letters of s, and nothing else, as the
// tokenizer does (strings.ToLower would also replace invalid UTF-8).
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
