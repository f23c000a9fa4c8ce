package shopsites

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// jsUndefined stands for JavaScript's undefined in a value jsLiteral
// writes.
type jsUndefined struct{}

// jsLiteral writes v as a JavaScript object literal the way a Vue
// storefront's server renders its state, not as JSON: keys unquoted where
// they are identifier names and single-quoted where not, strings in
// single quotes (a quote as \', / as \u002F, < as \u003C and line breaks
// escaped; other characters as they are), a trailing comma after every
// member and element, nil as null and jsUndefined as undefined. v is
// built of map[string]any (keys written in sorted order), []any,
// []string, string, bool, int, int64, float64, nil and jsUndefined.
func jsLiteral(v any) string {
	var b strings.Builder
	writeJS(&b, v)
	return b.String()
}

func writeJS(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case jsUndefined:
		b.WriteString("undefined")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case float64:
		b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
	case string:
		writeJSString(b, v)
	case []string:
		b.WriteByte('[')
		for _, s := range v {
			writeJSString(b, s)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case []any:
		b.WriteByte('[')
		for _, e := range v {
			writeJS(b, e)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if isIdentifier(k) {
				b.WriteString(k)
			} else {
				writeJSString(b, k)
			}
			b.WriteByte(':')
			writeJS(b, v[k])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	default:
		b.WriteString("undefined") // unreachable for the values the shops build
	}
}

// writeJSString writes s as a single-quoted JavaScript string.
func writeJSString(b *strings.Builder, s string) {
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\'':
			b.WriteString(`\'`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\u002F`)
		case '<':
			b.WriteString(`\u003C`)
		case '\n':
			b.WriteString(`\n`)
		case '\u2028', '\u2029':
			b.WriteString(`\u` + strconv.FormatInt(int64(r), 16))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
}

// isIdentifier reports whether k is an ASCII JavaScript identifier name.
func isIdentifier(k string) bool {
	for i, r := range k {
		letter := r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return k != ""
}
