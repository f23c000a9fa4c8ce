package extract

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzParseNumber checks the number parsers: what they accept is digits
// with optional sign, grouping, fraction and exponent; an accepted value
// formats back (as a key does) and parses to itself, with or without
// thousands separators; and an integer reads the same as a float.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{
		"0", "-0", "+42", "007", "1,234", "1_234_567", "1 234 567", "-1,000,000",
		"9223372036854775807", "-9223372036854775808", "9223372036854775808",
		"1,5", "1,2345", ",123", "1.5", "+.5", "5.", "1,234.50", "1e3", "2.5E-2",
		"1e400", "4.9e-324", "1e", "NaN", "-Inf", "0x1F", "١٢", "12 apples",
		"1'234.50", "1\u2019234", "1,23,456.00", "1\u00a0234", "1\u202f234", "1'234,50", "1.234,56",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, ok := parseInt(s); ok {
			checkNumberText(t, s, false)
			for _, text := range []string{strconv.FormatInt(n, 10), formatKey(n), group(n, ','), group(n, '_'), group(n, ' ')} {
				if back, ok := parseInt(text); !ok || back != n {
					t.Fatalf("parseInt(%q) = %d, but its text %q parses to %d, %v", s, n, text, back, ok)
				}
			}
			if want, err := strconv.ParseInt(ungroup(s), 10, 64); err != nil || want != n {
				t.Fatalf("parseInt(%q) = %d, strconv reads it as %d (%v)", s, n, want, err)
			}
			if v, ok := parseFloat(s); !ok || v != float64(n) {
				t.Fatalf("parseInt(%q) = %d but parseFloat gives %v, %v", s, n, v, ok)
			}
		}
		if v, ok := parseFloat(s); ok {
			checkNumberText(t, s, true)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("parseFloat(%q) = %v", s, v)
			}
			text := formatKey(v)
			if back, ok := parseFloat(text); !ok || math.Float64bits(back) != math.Float64bits(v) {
				t.Fatalf("parseFloat(%q) = %v, but its text %q parses to %v, %v", s, v, text, back, ok)
			}
			if want, err := strconv.ParseFloat(ungroup(s), 64); err != nil || math.Float64bits(want) != math.Float64bits(v) {
				t.Fatalf("parseFloat(%q) = %v, strconv reads it as %v (%v)", s, v, want, err)
			}
		}
	})
}

// checkNumberText asserts that an accepted number holds only digits,
// signs, separators and, for a float, a point and an exponent.
func checkNumberText(t *testing.T, s string, float bool) {
	t.Helper()
	allowed := "0123456789+-,_ '\u2019\u00a0\u202f"
	if float {
		allowed += ".eE"
	}
	if strings.Trim(s, allowed) != "" || strings.TrimLeft(s, "+-") == "" {
		t.Fatalf("%q accepted as a number", s)
	}
}

// group writes n with its digits grouped in threes by sep.
func group(n int64, sep byte) string {
	digits := strconv.FormatInt(n, 10)
	sign := ""
	if digits[0] == '-' {
		sign, digits = "-", digits[1:]
	}
	var b strings.Builder
	b.WriteString(sign)
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(sep)
		}
		b.WriteByte(digits[i])
	}
	return b.String()
}

// ungroup drops thousands separators.
func ungroup(s string) string {
	return strings.NewReplacer(",", "", "_", "", " ", "", "'", "", "\u2019", "", "\u00a0", "", "\u202f", "").Replace(s)
}

// FuzzParseBool checks that exactly the documented words are booleans, in
// any ASCII case, and that a boolean's text parses back to it.
func FuzzParseBool(f *testing.F) {
	for _, s := range []string{"true", "FALSE", "Yes", "no", "y", "N", "on", "OFF", "1", "0", "", "2", "tru"} {
		f.Add(s)
	}
	words := map[string]bool{"true": true, "yes": true, "y": true, "on": true, "1": true,
		"false": false, "no": false, "n": false, "off": false, "0": false}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := parseBool(s)
		want, known := words[asciiLower(s)]
		if ok != known || v != want {
			t.Fatalf("parseBool(%q) = %v, %v; want %v, %v", s, v, ok, want, known)
		}
		if ok {
			if back, ok := parseBool(formatKey(v)); !ok || back != v {
				t.Fatalf("parseBool(%q) = %v, but its text %q parses to %v, %v", s, v, formatKey(v), back, ok)
			}
		}
	})
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

// FuzzParseTime checks that an accepted timestamp is in UTC and that its
// key text (RFC 3339 with nanoseconds) parses back to the same instant
// without a format, for the years RFC 3339 can write.
func FuzzParseTime(f *testing.F) {
	for _, c := range [][2]string{
		{"2016-03-01T10:20:30.123456789+02:00", ""},
		{"2016-03-01T10:20:30Z", ""},
		{"Tue, 01 Mar 2016 10:20:30 GMT", ""},
		{"Tue, 01 Mar 2016 10:20:30 +0100", ""},
		{"2016-03-01 10:20:30", ""},
		{"2016-03-01", ""},
		{"0000-01-01T00:30:00+01:00", ""},
		{"9999-12-31T23:59:59-23:59", ""},
		{"01/03/2016", "02/01/2006"},
		{"1 March 2016 10:20 +0200", "2 January 2006 15:04 -0700"},
		{"16-3-1 MST", "06-1-2 MST"},
		{"yesterday", ""},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, s, format string) {
		v, ok := parseTime(s, format)
		if !ok {
			return
		}
		if v.Location() != time.UTC {
			t.Fatalf("parseTime(%q, %q) = %v, not in UTC", s, format, v)
		}
		if y := v.Year(); y < 0 || y > 9999 {
			return
		}
		text := formatKey(v)
		back, ok := parseTime(text, "")
		if !ok || back != v {
			t.Fatalf("parseTime(%q, %q) = %v, but its text %q parses to %v, %v", s, format, v, text, back, ok)
		}
	})
}

// FuzzReadNumber checks the reading of numbers in text: a plain number
// reads as the strict parsers read it; what is accepted around a number
// holds no digit; under either decimal point an integer reads the same as
// a float.
func FuzzReadNumber(f *testing.F) {
	for _, s := range []string{
		"$2,386.79", "2,2 kg", "50 pcs", "EUR 12", "1.234,56 €", "2.137", "12 red apples", "US$ 12",
		"€", "-5 €", "₹ 1,200", "12 € / kg", "1e3", "12 Stück", "", " ", "usd", "1,5",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, comma bool) {
		if v, ok := parseFloatIn(s, comma); ok {
			if r, rok := readFloat(s, comma); !rok || math.Float64bits(r) != math.Float64bits(v) {
				t.Fatalf("readFloat(%q, %v) = %v, %v; the plain number reads %v", s, comma, r, rok, v)
			}
		}
		fv, fok := readFloat(s, comma)
		if fok {
			core, ok := numberCore(s)
			if !ok {
				core = s
			}
			i := strings.Index(s, core)
			if i < 0 || strings.ContainsAny(s[:i]+s[i+len(core):], "0123456789") {
				t.Fatalf("readFloat(%q) = %v with digits around its number %q", s, fv, core)
			}
		}
		if n, ok := readInt(s, comma); ok {
			if !fok || (math.Abs(float64(n)) < 1<<53 && fv != float64(n)) {
				t.Fatalf("readInt(%q, %v) = %d but readFloat gives %v, %v", s, comma, n, fv, fok)
			}
		}
	})
}

// FuzzGlobMatch compares map patterns with the equivalent regular
// expression.
func FuzzGlobMatch(f *testing.F) {
	for _, c := range [][2]string{{"only * left", "only 3 left"}, {"a?c", "aéc"}, {"*a*b*", "xxbxxa"}, {"*", ""}, {"??", "é"}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, p, s string) {
		if !utf8.ValidString(p) || !utf8.ValidString(s) {
			return
		}
		expr := "(?s)^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(p)) + "$"
		re, err := regexp.Compile(expr)
		if err != nil {
			t.Fatalf("pattern %q: %v", p, err)
		}
		if got, want := globMatch(p, s), re.MatchString(s); got != want {
			t.Fatalf("globMatch(%q, %q) = %v, regexp says %v", p, s, got, want)
		}
	})
}
