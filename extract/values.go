package extract

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// timeLayouts are tried in order for timestamp fields without a Format.
var timeLayouts = []string{
	time.RFC3339Nano,
	time.RFC3339,
	time.RFC1123,
	time.RFC1123Z,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
	"2006-01-02",
}

// parseInt parses an optionally signed decimal integer whose digits may be
// grouped in threes by ',', '_' or ' ' ("1,234", "-1 000 000").
func parseInt(s string) (int64, bool) {
	return parseIntIn(s, false)
}

// parseIntIn is parseInt, or with comma set, parseInt with '.' and ' '
// grouping thousands ("1.234").
func parseIntIn(s string, comma bool) (int64, bool) {
	var buf [32]byte
	clean, ok := cleanNumber(buf[:0], s, false, comma)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(string(clean), 10, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// parseFloat parses an optionally signed decimal number with the same digit
// grouping as parseInt, an optional '.' fraction and an optional exponent.
// NaN, infinities and out-of-range values are rejected.
func parseFloat(s string) (float64, bool) {
	return parseFloatIn(s, false)
}

// parseFloatIn is parseFloat, or with comma set, parseFloat with ',' as
// the decimal point and '.' and ' ' grouping thousands ("1.234,5").
func parseFloatIn(s string, comma bool) (float64, bool) {
	var buf [64]byte
	clean, ok := cleanNumber(buf[:0], s, true, comma)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(clean), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// cleanNumber validates s as a number and appends it to dst without group
// separators and with '.' as its decimal point. The integer part's digits
// may be grouped by one separator at a time (see groupSep); the group that
// ends it has three digits and each group after the first two or three,
// so "1,234", "1'234" and Indian "1,23,456" are grouped, while "1,5" (a
// decimal comma) and "1'234,50" are rejected rather than read as 15 and
// 123450. The decimal point is '.', or with comma set ','.
func cleanNumber(dst []byte, s string, float, comma bool) ([]byte, bool) {
	point := byte('.')
	if comma {
		point = ','
	}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		dst = append(dst, s[i])
		i++
	}
	digits, groups, last := 0, 0, 0
	for {
		n := 0
		for ; i < len(s) && isDigit(s[i]); i++ {
			dst = append(dst, s[i])
			n++
		}
		if n == 0 {
			break
		}
		if groups > 0 && n != 2 && n != 3 {
			return dst, false
		}
		digits, groups, last = digits+n, groups+1, n
		w := groupSep(s[i:], comma)
		if w == 0 || i+w >= len(s) || !isDigit(s[i+w]) {
			break
		}
		i += w
	}
	if groups > 1 && last != 3 {
		return dst, false
	}
	if float && i < len(s) && s[i] == point {
		dst = append(dst, '.')
		for i++; i < len(s) && isDigit(s[i]); i++ {
			dst = append(dst, s[i])
			digits++
		}
	}
	if digits == 0 {
		return dst, false
	}
	if float && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		dst = append(dst, 'e')
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			dst = append(dst, s[i])
			i++
		}
		exp := 0
		for ; i < len(s) && isDigit(s[i]); i++ {
			dst = append(dst, s[i])
			exp++
		}
		if exp == 0 {
			return dst, false
		}
	}
	return dst, i == len(s)
}

// groupSep returns the byte length of the digit group separator s starts
// with, 0 when it starts with none. The separators are the one of ',' and
// '.' that is not the decimal point, '_' (with a decimal point), an
// apostrophe (' or U+2019, as Swiss prices are written), a space, a
// no-break space (U+00A0) and a narrow no-break space (U+202F).
func groupSep(s string, comma bool) int {
	if s == "" {
		return 0
	}
	switch c := s[0]; {
	case c == ' ' || c == '\'':
		return 1
	case c == ',' || c == '_':
		return b2i(!comma)
	case c == '.':
		return b2i(comma)
	}
	for _, sep := range [...]string{"\u00a0", "\u2019", "\u202f"} {
		if strings.HasPrefix(s, sep) {
			return len(sep)
		}
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseBool accepts true/false, yes/no, y/n, on/off and 1/0, in any ASCII
// case. (strings.EqualFold would also take "yeſ" with a long s: Unicode
// folds it to s.)
func parseBool(s string) (bool, bool) {
	if len(s) > len("false") {
		return false, false
	}
	switch strings.ToLower(s) {
	case "1", "true", "yes", "y", "on":
		return true, true
	case "0", "false", "no", "n", "off":
		return false, true
	}
	return false, false
}

// parseTime parses s with format, or with each of timeLayouts when format
// is empty, and returns the instant in UTC.
func parseTime(s, format string) (time.Time, bool) {
	if format != "" {
		t, err := time.Parse(format, s)
		return t.UTC(), err == nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// formatKey renders a key field's value as text.
func formatKey(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case time.Time:
		return v.Format(time.RFC3339Nano)
	}
	return ""
}
