// Package jsliteral reads the value a page's inline script assigns to a
// name (window.__INITIAL_STATE__ = {...};) and turns it into JSON: a
// JavaScript literal of JSON's shape, with the tolerance object literals
// have — unquoted keys, single-quoted strings, trailing commas, undefined
// — or a JSON.parse('...') of a string literal (SPEC 6c, "JSON in
// JavaScript"). Anything else JavaScript allows in a value — a call, a
// variable, new Date(...), !0, a comment — makes it unparsable: the
// package reads data, it runs no code.
package jsliteral

import (
	"errors"
	"fmt"
	"strings"
)

// MaxDepth bounds how deep objects and arrays may nest, as encoding/json
// does.
const MaxDepth = 10000

// Canonical checks a dotted JavaScript name (__PRELOADED_STATE__,
// window.__INITIAL_STATE__, ShopifyAnalytics.meta) and returns it without
// a leading "window.": window.NAME and NAME are the same name.
func Canonical(name string) (string, error) {
	n := strings.TrimPrefix(strings.TrimSpace(name), "window.")
	if n == "" {
		return "", errors.New("a name is required, such as window.__INITIAL_STATE__")
	}
	for _, part := range strings.Split(n, ".") {
		if !isIdentifier(part) {
			return "", fmt.Errorf("%q is not a dotted JavaScript name such as window.__INITIAL_STATE__", name)
		}
	}
	return n, nil
}

func isIdentifier(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

func isIdentChar(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Assignment is a value assigned to the name in a script.
type Assignment struct {
	// JSON is the value as JSON text, when it parsed.
	JSON []byte
	// Err says where and why the value did not parse.
	Err error
}

// Find returns the value of the first assignment to name (Canonical's
// form) in scripts, read in order, whose value parses. found is false
// when no script assigns the name at all; with found and a nil JSON, err
// says where the first assigned value stopped parsing.
func Find(scripts []string, name string) (json []byte, found bool, err error) {
	for _, src := range scripts {
		for from := 0; ; {
			at, ok := nextAssignment(src, name, from)
			if !ok {
				break
			}
			found = true
			out, perr := Value(src[at:])
			if perr == nil {
				return out, true, nil
			}
			if err == nil {
				err = perr
			}
			from = at
		}
	}
	return nil, found, err
}

// nextAssignment finds, at or after from, an assignment to name: name not
// preceded by a letter, digit, _, $ or . (but for window.) and not
// followed by a letter, digit, _ or $, then optional whitespace and an =
// that does not begin == or =>. It returns where the value starts.
func nextAssignment(src, name string, from int) (int, bool) {
	for from < len(src) {
		i := strings.Index(src[from:], name)
		if i < 0 {
			return 0, false
		}
		i += from
		from = i + 1
		start := i
		if strings.HasSuffix(src[:i], "window.") {
			start = i - len("window.")
		}
		if start > 0 && (isIdentChar(src[start-1]) || src[start-1] == '.') {
			continue
		}
		j := i + len(name)
		if j < len(src) && isIdentChar(src[j]) {
			continue
		}
		j = skipSpace(src, j)
		if j >= len(src) || src[j] != '=' || j+1 < len(src) && (src[j+1] == '=' || src[j+1] == '>') {
			continue
		}
		return j + 1, true
	}
	return 0, false
}

// Value reads the value src starts with (after whitespace): a literal as
// the package says, or JSON.parse of a string literal, and returns it as
// JSON text. What follows the value (a ;, more code) is ignored.
func Value(src string) ([]byte, error) {
	p := &parser{src: src}
	p.skip()
	if strings.HasPrefix(src[p.i:], "JSON.parse") {
		return p.jsonParse()
	}
	if err := p.value(0); err != nil {
		return nil, err
	}
	return p.out, nil
}

// SyntaxError says where a value stopped parsing.
type SyntaxError struct {
	// Offset is the byte offset in the value's text.
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("at byte %d of the value: %s", e.Offset, e.Msg)
}

func skipSpace(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			i++
		default:
			if strings.HasPrefix(s[i:], "\u00a0") || strings.HasPrefix(s[i:], "\u2028") || strings.HasPrefix(s[i:], "\u2029") || strings.HasPrefix(s[i:], "\ufeff") {
				_, size := decodeRune(s[i:])
				i += size
				continue
			}
			return i
		}
	}
	return i
}
