package extract

import (
	"math"
	"testing"
	"time"
)

func TestParseInt(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"42", 42, true},
		{"+42", 42, true},
		{"-42", -42, true},
		{"007", 7, true},
		{"1,234", 1234, true},
		{"1_234_567", 1234567, true},
		{"1 234 567", 1234567, true},
		{"-1,000,000", -1000000, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false}, // overflow
		{"", 0, false},
		{"-", 0, false},
		{"1,5", 0, false},    // decimal comma, not a thousands group
		{"1,2345", 0, false}, // group of four
		{",123", 0, false},
		{"123,", 0, false},
		{"1,,234", 0, false},
		{"1.5", 0, false},
		{"1e3", 0, false},
		{"12 apples", 0, false},
		{"$12", 0, false},
		{"- 1", 0, false},
		{"0x1F", 0, false},
		{"١٢", 0, false}, // non-ASCII digits
	}
	for _, tt := range tests {
		got, ok := parseInt(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseFloat(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0", 0, true},
		{"51.77", 51.77, true},
		{"-51.77", -51.77, true},
		{"+.5", 0.5, true},
		{"5.", 5, true},
		{"1,234.50", 1234.5, true},
		{"1 234 567.125", 1234567.125, true},
		{"1_000", 1000, true},
		{"1e3", 1000, true},
		{"2.5E-2", 0.025, true},
		{"", 0, false},
		{".", 0, false},
		{"1,5", 0, false},
		{"1.2.3", 0, false},
		{"1e", 0, false},
		{"1e+", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"-Infinity", 0, false},
		{"1e400", 0, false}, // overflows to Inf
		{"0x1p-2", 0, false},
		{"£51.77", 0, false},
		{"51.77 GBP", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseFloat(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseFloat(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseBool(t *testing.T) {
	for _, s := range []string{"true", "TRUE", "True", "yes", "YES", "y", "Y", "on", "On", "1"} {
		if v, ok := parseBool(s); !ok || !v {
			t.Errorf("parseBool(%q) = %v, %v; want true, true", s, v, ok)
		}
	}
	for _, s := range []string{"false", "FALSE", "no", "No", "n", "N", "off", "OFF", "0"} {
		if v, ok := parseBool(s); !ok || v {
			t.Errorf("parseBool(%q) = %v, %v; want false, true", s, v, ok)
		}
	}
	for _, s := range []string{"", "2", "t", "f", "yess", "tru", "01", "nope", "enabled", "yeſ", "falſe", " yes", "truee"} {
		if _, ok := parseBool(s); ok {
			t.Errorf("parseBool(%q) accepted", s)
		}
	}
}

func TestParseTime(t *testing.T) {
	d := func(h, m, s, ns int) time.Time { return time.Date(2016, 3, 1, h, m, s, ns, time.UTC) }
	tests := []struct {
		in, format string
		want       time.Time
		ok         bool
	}{
		{"2016-03-01T10:20:30.123456789+02:00", "", d(8, 20, 30, 123456789), true}, // RFC3339Nano
		{"2016-03-01T10:20:30Z", "", d(10, 20, 30, 0), true},                       // RFC3339
		{"2016-03-01T10:20:30-01:00", "", d(11, 20, 30, 0), true},                  // RFC3339 offset
		{"Tue, 01 Mar 2016 10:20:30 GMT", "", d(10, 20, 30, 0), true},              // RFC1123
		{"Tue, 01 Mar 2016 10:20:30 +0100", "", d(9, 20, 30, 0), true},             // RFC1123Z
		{"2016-03-01T10:20:30", "", d(10, 20, 30, 0), true},
		{"2016-03-01 10:20:30", "", d(10, 20, 30, 0), true},
		{"2016-03-01", "", d(0, 0, 0, 0), true},
		{"01/03/2016", "02/01/2006", d(0, 0, 0, 0), true},
		{"1 March 2016 10:20 +0200", "2 January 2006 15:04 -0700", d(8, 20, 0, 0), true},
		{"2016-03-01", "02/01/2006", time.Time{}, false}, // Format set: no fallback
		{"01/03/2016", "", time.Time{}, false},
		{"2016-13-01", "", time.Time{}, false},
		{"yesterday", "", time.Time{}, false},
		{"", "", time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := parseTime(tt.in, tt.format)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("parseTime(%q, %q) = %v, %v; want %v, %v", tt.in, tt.format, got, ok, tt.want, tt.ok)
		}
		if ok && got.Location() != time.UTC {
			t.Errorf("parseTime(%q) location %v, want UTC", tt.in, got.Location())
		}
	}
}

func TestFormatKey(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{"abc", "abc"},
		{int64(-1234), "-1234"},
		{12.5, "12.5"},
		{1e21, "1e+21"},
		{true, "true"},
		{time.Date(2016, 3, 1, 10, 20, 30, 500, time.UTC), "2016-03-01T10:20:30.0000005Z"},
	}
	for _, tt := range tests {
		if got := formatKey(tt.v); got != tt.want {
			t.Errorf("formatKey(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
