package extract

import (
	"unicode"
	"unicode/utf8"
)

// readInt reads an int64 field's text: a number as parseIntIn reads it,
// with the surroundings numberCore allows.
func readInt(s string, comma bool) (int64, bool) {
	if v, ok := parseIntIn(s, comma); ok {
		return v, true
	}
	if core, ok := numberCore(s); ok && len(core) < len(s) {
		return parseIntIn(core, comma)
	}
	return 0, false
}

// readFloat reads a float64 field's text: a number as parseFloatIn reads
// it, with the surroundings numberCore allows.
func readFloat(s string, comma bool) (float64, bool) {
	if v, ok := parseFloatIn(s, comma); ok {
		return v, true
	}
	if core, ok := numberCore(s); ok && len(core) < len(s) {
		return parseFloatIn(core, comma)
	}
	return 0, false
}

// numberCore returns s without what may surround a number in text:
// whitespace and currency signs (Unicode category Sc) on both sides, a
// 3-letter currency code before it ("EUR 12") and one word of letters
// after it, a unit or a currency code ("2,2 kg", "50 pcs", "12 EUR").
// false when anything else is left around it or nothing is left at all.
func numberCore(s string) (string, bool) {
	i := skipAround(s, 0)
	if n := wordAt(s[i:]); n > 0 {
		if !currencyCode(s[i : i+n]) {
			return "", false
		}
		i = skipAround(s, i+n)
	}
	j := skipAroundBack(s, len(s))
	if j <= i {
		return "", false
	}
	if n := wordBefore(s[i:j]); n > 0 {
		j = skipAroundBack(s, j-n)
	}
	if j <= i {
		return "", false
	}
	return s[i:j], true
}

// around reports whether r may surround a number: whitespace or a currency
// sign.
func around(r rune) bool {
	return r == ' ' || unicode.IsSpace(r) || unicode.Is(unicode.Sc, r)
}

// skipAround returns the index of the first rune at or after i that is not
// whitespace or a currency sign.
func skipAround(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !around(r) {
			break
		}
		i += size
	}
	return i
}

// skipAroundBack returns the index just after the last rune before j that
// is not whitespace or a currency sign.
func skipAroundBack(s string, j int) int {
	for j > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:j])
		if !around(r) {
			break
		}
		j -= size
	}
	return j
}

// wordAt returns the byte length of the letters s starts with.
func wordAt(s string) int {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		if !unicode.IsLetter(r) {
			break
		}
		n += size
	}
	return n
}

// wordBefore returns the byte length of the letters s ends with.
func wordBefore(s string) int {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeLastRuneInString(s[:len(s)-n])
		if !unicode.IsLetter(r) {
			break
		}
		n += size
	}
	return n
}

// currencyCode reports whether w is three ASCII letters ("EUR", "usd").
func currencyCode(w string) bool {
	if len(w) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if c := w[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
