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
// separators and with '.' as its decimal point. A separator must sit
// between a digit and exactly three digits, so "1,5" (a decimal comma) is
// rejected rather than read as 15. The separators are ',', '_' and ' ',
// and the decimal point '.'; with comma set, '.' and ' ', and ','.
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
	start, digits := i, 0
	for i < len(s) {
		c := s[i]
		if isDigit(c) {
			dst = append(dst, c)
			digits++
			i++
			continue
		}
		if isGroupSep(c, comma) && i > start && isDigit(s[i-1]) && group3(s[i+1:]) {
			i++
			continue
		}
		break
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

// isGroupSep reports whether c groups thousands: ',', '_' or ' ', or with
// a decimal comma '.' or ' '.
func isGroupSep(c byte, comma bool) bool {
	if comma {
		return c == '.' || c == ' '
	}
	return c == ',' || c == '_' || c == ' '
}

// group3 reports whether s starts with exactly three digits.
func group3(s string) bool {
	return len(s) >= 3 && isDigit(s[0]) && isDigit(s[1]) && isDigit(s[2]) &&
		(len(s) == 3 || !isDigit(s[3]))
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
