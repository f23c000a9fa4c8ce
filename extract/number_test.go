package extract

import "testing"

// TestReadNumber covers SPEC 6b's decimal rules and what may surround a
// number in text.
func TestReadNumber(t *testing.T) {
	tests := []struct {
		in    string
		comma bool
		float float64
		fok   bool
		int   int64
		iok   bool
	}{
		// decimal = "." (the default): ',' groups thousands
		{"2.137", false, 2.137, true, 0, false},
		{"2,137", false, 2137, true, 2137, true},
		{"$2,386.79", false, 2386.79, true, 0, false},
		{"1,5", false, 0, false, 0, false},
		{"1 234 567", false, 1234567, true, 1234567, true},
		// decimal = ",": '.' and spaces group thousands
		{"2.137", true, 2137, true, 2137, true},
		{"2,2 kg", true, 2.2, true, 0, false},
		{"1.234,56 €", true, 1234.56, true, 0, false},
		{"€ 1.234.567,5", true, 1234567.5, true, 0, false},
		{"1 234,56", true, 1234.56, true, 0, false},
		{"1.5", true, 0, false, 0, false},
		{"1,234.56", true, 0, false, 0, false},
		// surroundings: whitespace, currency signs, a code before, one word after
		{"50 pcs", false, 50, true, 50, true},
		{"EUR 12", false, 12, true, 12, true},
		{"12 EUR", false, 12, true, 12, true},
		{"usd12", false, 12, true, 12, true},
		{"EUR 12 kg", false, 12, true, 12, true},
		{"£51.77", false, 51.77, true, 0, false},
		{"51.77 GBP", false, 51.77, true, 0, false},
		{"-5 €", false, -5, true, -5, true},
		{"€ -5", false, -5, true, -5, true},
		{"12 Stück", false, 12, true, 12, true},
		{"₹ 1,200", false, 1200, true, 1200, true},
		// SPEC 6c: apostrophes, no-break spaces, groups of two or three
		{"CHF 1'234.50", false, 1234.5, true, 0, false},
		{"CHF 1\u2019234.50", false, 1234.5, true, 0, false},
		{"CHF 1'234'567", false, 1234567, true, 1234567, true},
		{"1,23,456.00", false, 123456, true, 0, false},
		{"\u20b9 12,34,56,789", false, 123456789, true, 123456789, true},
		{"1\u00a0234", false, 1234, true, 1234, true},
		{"1\u202f234,56", true, 1234.56, true, 0, false},
		{"1'234,50", true, 1234.5, true, 0, false},
		{"1,5", false, 0, false, 0, false},
		{"2,99", false, 0, false, 0, false},
		{"1'234,50", false, 0, false, 0, false},
		{"1.234,56", false, 0, false, 0, false},
		{"1'234.567,8", false, 0, false, 0, false},
		{"1''234", false, 0, false, 0, false},
		{"1,2,345", false, 0, false, 0, false},
		{"12,3456", false, 0, false, 0, false},
		{"1'23", false, 0, false, 0, false},
		// anything else is a type error
		{"12 red apples", false, 0, false, 0, false},
		{"ab 12", false, 0, false, 0, false},
		{"US$ 12", false, 0, false, 0, false},
		{"12 € / kg", false, 0, false, 0, false},
		{"15%", false, 0, false, 0, false},
		{"-€5", false, 0, false, 0, false},
		{"EUR", false, 0, false, 0, false},
		{"€", false, 0, false, 0, false},
		{"", false, 0, false, 0, false},
		{"1e3", false, 1000, true, 0, false},
	}
	for _, tt := range tests {
		if v, ok := readFloat(tt.in, tt.comma); ok != tt.fok || v != tt.float {
			t.Errorf("readFloat(%q, comma %v) = %v, %v; want %v, %v", tt.in, tt.comma, v, ok, tt.float, tt.fok)
		}
		if v, ok := readInt(tt.in, tt.comma); ok != tt.iok || v != tt.int {
			t.Errorf("readInt(%q, comma %v) = %v, %v; want %v, %v", tt.in, tt.comma, v, ok, tt.int, tt.iok)
		}
	}
}

// TestReadNumberKeepsPlainNumbers: a number without surroundings reads as
// parseInt and parseFloat read it, so existing fields keep their values.
func TestReadNumberKeepsPlainNumbers(t *testing.T) {
	for _, s := range []string{"0", "-0", "+42", "1,234", "1_234", "1 234.5", ".5", "5.", "1e3", "2.5E-2", "9223372036854775807", "1,5", "1e", "NaN"} {
		f, fok := parseFloat(s)
		if rf, rok := readFloat(s, false); fok && (!rok || rf != f) {
			t.Errorf("readFloat(%q) = %v, %v; parseFloat gives %v", s, rf, rok, f)
		}
		i, iok := parseInt(s)
		if ri, rok := readInt(s, false); iok && (!rok || ri != i) {
			t.Errorf("readInt(%q) = %v, %v; parseInt gives %v", s, ri, rok, i)
		}
	}
}
