package extract

import (
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"   ", ""},
		{"plain", "plain"},
		{"  lead and trail \t", "lead and trail"},
		{"tabs\t\tand\nnew\r\nlines", "tabs and new lines"},
		{"nbsp\u00a0\u00a0here", "nbsp here"},
		{"\u00a0edge\u00a0", "edge"},
		{"em\u2003space\u3000ideo", "em space ideo"},
		{"nel\u0085x", "nel x"},
		{"zero\u200bwidth", "zero\u200bwidth"}, // not whitespace
		{"caf\u00e9  \u00fcber", "caf\u00e9 \u00fcber"},
		{"bad\xffutf8  x", "bad\xffutf8 x"},
		{"a\v\fb", "a b"},
	}
	for _, tt := range tests {
		if got := normalize(tt.in); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNormalizerAcrossWrites(t *testing.T) {
	var w normalizer
	for _, s := range []string{"  a ", "\n", " b", "c ", "\u00a0", ""} {
		w.writeString(s)
	}
	if got := string(w.b); got != "a bc" {
		t.Errorf("got %q, want %q", got, "a bc")
	}
	w.reset()
	w.writeString(" x ")
	if got := string(w.b); got != "x" {
		t.Errorf("after reset got %q, want %q", got, "x")
	}
}

func TestWriteNode(t *testing.T) {
	x := mustCompile(t, Spec{Listing: ListingSpec{ItemLinks: "a"}})
	doc := mustParse(t, x, `<div id="d" data-v="  v  1 "> A <b>B</b>C
	<script>s</script></div>`)
	n := doc.Find("#d").Nodes[0]
	tests := []struct {
		attr string
		want string
		ok   bool
	}{
		{"", "A BC s", true}, // like goquery Text: every text node, scripts too
		{"data-v", "v 1", true},
		{"id", "d", true},
		{"title", "", false},
	}
	for _, tt := range tests {
		var w normalizer
		ok := w.writeNode(n, tt.attr)
		if ok != tt.ok || string(w.b) != tt.want {
			t.Errorf("writeNode(%q) = %q, %v; want %q, %v", tt.attr, w.b, ok, tt.want, tt.ok)
		}
	}
	// The same as normalising goquery's Text.
	if got, want := func() string { var w normalizer; w.writeNode(n, ""); return string(w.b) }(),
		normalize(doc.Find("#d").Text()); got != want {
		t.Errorf("text %q differs from normalised goquery Text %q", got, want)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", " a  b ", "\u00a0x\ty\n", "\xff \xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := normalize(s)
		if strings.HasPrefix(got, " ") || strings.HasSuffix(got, " ") || strings.Contains(got, "  ") {
			t.Fatalf("normalize(%q) = %q has stray spaces", s, got)
		}
		if want := strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("normalize(%q) = %q, strings.Fields gives %q", s, got, want)
		}
	})
}
