package jsliteral

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// parser turns one literal into JSON text, writing it to out as it reads.
type parser struct {
	src string
	i   int
	out []byte
}

func decodeRune(s string) (rune, int) { return utf8.DecodeRuneInString(s) }

func (p *parser) skip() { p.i = skipSpace(p.src, p.i) }

func (p *parser) fail(format string, args ...any) error {
	return &SyntaxError{Offset: p.i, Msg: fmt.Sprintf(format, args...)}
}

// unexpected says what stands where a value or a delimiter should.
func (p *parser) unexpected(want string) error {
	if p.i >= len(p.src) {
		return p.fail("the text ends where %s should be", want)
	}
	r, _ := decodeRune(p.src[p.i:])
	return p.fail("%q where %s should be", string(r), want)
}

// value reads one value.
func (p *parser) value(depth int) error {
	p.skip()
	if p.i >= len(p.src) {
		return p.unexpected("a value")
	}
	switch c := p.src[p.i]; {
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			return p.fail("nested deeper than %d", MaxDepth)
		}
		if c == '{' {
			return p.object(depth + 1)
		}
		return p.array(depth + 1)
	case c == '"' || c == '\'':
		s, err := p.string()
		if err != nil {
			return err
		}
		p.out = appendJSONString(p.out, s)
		return nil
	case c == '-' || isDigit(c):
		return p.number()
	case isIdentChar(c):
		return p.keyword()
	}
	return p.unexpected("a value")
}

// keyword reads true, false, null or undefined (as null); any other name
// is a variable, which a literal cannot hold.
func (p *parser) keyword() error {
	start := p.i
	for p.i < len(p.src) && isIdentChar(p.src[p.i]) {
		p.i++
	}
	switch w := p.src[start:p.i]; w {
	case "true", "false", "null":
		p.out = append(p.out, w...)
	case "undefined":
		p.out = append(p.out, "null"...)
	default:
		p.i = start
		return p.fail("%q is a name, not a literal value", w)
	}
	return nil
}

// object reads { key: value, ... } with identifier or quoted keys and an
// optional trailing comma.
func (p *parser) object(depth int) error {
	return p.list('{', '}', func() error {
		key, err := p.key()
		if err != nil {
			return err
		}
		p.out = appendJSONString(p.out, key)
		p.skip()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return p.unexpected("a : after the key")
		}
		p.i++
		p.out = append(p.out, ':')
		return p.value(depth)
	})
}

// key reads an object key: a string literal or an identifier name.
func (p *parser) key() (string, error) {
	if p.i < len(p.src) && (p.src[p.i] == '"' || p.src[p.i] == '\'') {
		return p.string()
	}
	start := p.i
	for p.i < len(p.src) && isIdentChar(p.src[p.i]) {
		p.i++
	}
	if p.i == start || isDigit(p.src[start]) {
		p.i = start
		return "", p.unexpected("a key")
	}
	return p.src[start:p.i], nil
}

// array reads [ value, ... ] with an optional trailing comma.
func (p *parser) array(depth int) error {
	return p.list('[', ']', func() error { return p.value(depth) })
}

// list reads the elements of an object or an array, opened by open at
// p.i, each with elem, separated by commas, with an optional trailing one
// before close.
func (p *parser) list(open, close byte, elem func() error) error {
	p.i++
	p.out = append(p.out, open)
	for first := true; ; first = false {
		p.skip()
		if p.i < len(p.src) && p.src[p.i] == close {
			p.i++
			p.out = append(p.out, close)
			return nil
		}
		if !first {
			p.out = append(p.out, ',')
		}
		if err := elem(); err != nil {
			return err
		}
		p.skip()
		switch {
		case p.i < len(p.src) && p.src[p.i] == ',':
			p.i++
		case p.i < len(p.src) && p.src[p.i] == close:
		default:
			return p.unexpected(fmt.Sprintf("a , or a %c", close))
		}
	}
}

// number reads a number as JSON writes one.
func (p *parser) number() error {
	start := p.i
	if p.src[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.src) && isDigit(p.src[p.i]) {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	switch n := digits(); {
	case n == 0:
		return p.unexpected("a digit")
	case n > 1 && p.src[intStart] == '0':
		p.i = intStart
		return p.fail("a number with a leading 0 (an octal literal) is no JSON number")
	}
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return p.unexpected("a digit after the decimal point")
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return p.unexpected("a digit of the exponent")
		}
	}
	if p.i < len(p.src) && isIdentChar(p.src[p.i]) {
		return p.unexpected("the end of the number")
	}
	p.out = append(p.out, p.src[start:p.i]...)
	return nil
}

// string reads a single- or double-quoted string literal and returns its
// text, escapes decoded.
func (p *parser) string() (string, error) {
	q := p.src[p.i]
	p.i++
	var b []byte
	for {
		if p.i >= len(p.src) {
			return "", p.fail("the string is not closed")
		}
		c := p.src[p.i]
		switch {
		case c == q:
			p.i++
			return string(b), nil
		case c == '\n' || c == '\r':
			return "", p.fail("a line break inside a string")
		case c == '\\':
			var err error
			if b, err = p.escape(b); err != nil {
				return "", err
			}
		default:
			b = append(b, c)
			p.i++
		}
	}
}

// escape decodes the escape at p.i onto b.
func (p *parser) escape(b []byte) ([]byte, error) {
	if p.i+1 >= len(p.src) {
		return b, p.fail("the string is not closed")
	}
	c := p.src[p.i+1]
	p.i += 2
	switch c {
	case '"', '\'', '\\', '/':
		return append(b, c), nil
	case 'b':
		return append(b, '\b'), nil
	case 'f':
		return append(b, '\f'), nil
	case 'n':
		return append(b, '\n'), nil
	case 'r':
		return append(b, '\r'), nil
	case 't':
		return append(b, '\t'), nil
	case 'v':
		return append(b, '\v'), nil
	case '0':
		if p.i < len(p.src) && isDigit(p.src[p.i]) {
			return b, p.fail("an octal escape")
		}
		return append(b, 0), nil
	case 'x':
		v, ok := p.hex(2)
		if !ok {
			return b, p.fail(`\x needs two hex digits`)
		}
		return utf8.AppendRune(b, rune(v)), nil
	case 'u':
		v, ok := p.hex(4)
		if !ok {
			return b, p.fail(`\u needs four hex digits`)
		}
		r := rune(v)
		if utf16.IsSurrogate(r) {
			// A pair is two escapes; a lone half is no character.
			if p.i+1 < len(p.src) && p.src[p.i] == '\\' && p.src[p.i+1] == 'u' {
				save := p.i
				p.i += 2
				if lo, ok := p.hex(4); ok {
					if pair := utf16.DecodeRune(r, rune(lo)); pair != utf8.RuneError {
						return utf8.AppendRune(b, pair), nil
					}
				}
				p.i = save
			}
			r = utf8.RuneError
		}
		return utf8.AppendRune(b, r), nil
	}
	p.i -= 2
	return b, p.fail("the escape \\%c is not read here", c)
}

// hex reads n hex digits.
func (p *parser) hex(n int) (uint64, bool) {
	if p.i+n > len(p.src) {
		return 0, false
	}
	v, err := strconv.ParseUint(p.src[p.i:p.i+n], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += n
	return v, true
}

// jsonParse reads JSON.parse('...'): the JSON text the string literal
// holds.
func (p *parser) jsonParse() ([]byte, error) {
	p.i += len("JSON.parse")
	p.skip()
	if p.i >= len(p.src) || p.src[p.i] != '(' {
		return nil, p.unexpected("the ( of JSON.parse")
	}
	p.i++
	p.skip()
	if p.i >= len(p.src) || p.src[p.i] != '"' && p.src[p.i] != '\'' {
		return nil, p.unexpected("a string literal, the only argument JSON.parse is read with")
	}
	at := p.i
	text, err := p.string()
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.i >= len(p.src) || p.src[p.i] != ')' {
		return nil, p.unexpected("the ) of JSON.parse")
	}
	if !json.Valid([]byte(text)) {
		var v any
		err := json.Unmarshal([]byte(text), &v)
		p.i = at
		return nil, p.fail("JSON.parse's string is not JSON: %v", err)
	}
	return []byte(text), nil
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[r>>4], hex[r&15])
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}
