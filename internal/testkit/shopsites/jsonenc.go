package shopsites

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
)

// encodeJSON returns v as JSON the way encoding/json writes it (map keys
// sorted, so "@context" and "@type" come first; &, < and > as \u0026,
// \u003c and \u003e). php also escapes / as \/ and every non-ASCII
// character as \uXXXX, as PHP's json_encode does by default; pretty
// indents by two spaces. v must be JSON-encodable.
func encodeJSON(v any, php, pretty bool) string {
	var b []byte
	var err error
	if pretty {
		b, err = json.MarshalIndent(v, "", "  ")
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		return "null" // unreachable for the maps, slices and scalars the shops build
	}
	if !php {
		return string(b)
	}
	// Outside strings, JSON text is ASCII without slashes, so escaping the
	// whole text only touches string contents.
	out := make([]byte, 0, len(b)+len(b)/8)
	for _, r := range string(b) {
		switch {
		case r == '/':
			out = append(out, '\\', '/')
		case r < 0x80:
			out = append(out, byte(r))
		default:
			for _, u := range utf16.Encode([]rune{r}) {
				out = append(out, '\\', 'u')
				out = append(out, hex4(u)...)
			}
		}
	}
	return string(out)
}

// hex4 returns u as four lower-case hex digits.
func hex4(u uint16) string {
	s := strconv.FormatUint(uint64(u), 16)
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}
