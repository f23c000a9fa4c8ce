package urlparams

import (
	"net/url"
	"strings"
	"testing"
)

func mustNew(t testing.TB, patterns ...string) *Filter {
	t.Helper()
	f, err := New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestStrip(t *testing.T) {
	f := mustNew(t, append([]string{"sid", "ref_*", "osCsid"}, Defaults...)...)
	for _, tt := range []struct{ in, want string }{
		// SPEC 6c's example
		{"https://shop.example/p/4711;jsessionid=A1B2?sid=x&color=red", "https://shop.example/p/4711?color=red"},
		{"https://shop.example/p/1?osCsid=abc123", "https://shop.example/p/1"},
		{"https://shop.example/p/1?OSCSID=abc&page=2", "https://shop.example/p/1?page=2"},
		{"https://shop.example/p/1?utm_source=x&utm_medium=y&b=2&a=1", "https://shop.example/p/1?b=2&a=1"},
		{"https://shop.example/p/1?ref_home=1&ref=2", "https://shop.example/p/1?ref=2"},
		{"https://shop.example/a;JSESSIONID=1/b;v=2;jsessionid=3/c", "https://shop.example/a/b;v=2/c"},
		{"https://shop.example/p/1?q=caf%C3%A9&gclid=1", "https://shop.example/p/1?q=caf%C3%A9"},
		{"https://shop.example/p/1?utm%5Fsource=x", "https://shop.example/p/1"},
		{"https://shop.example/p/1?color=red", "https://shop.example/p/1?color=red"},
		{"https://shop.example/p;x=1", "https://shop.example/p;x=1"},
		{"not a url %zz?sid=1", "not a url %zz?sid=1"},
	} {
		if got := f.StripString(tt.in); got != tt.want {
			t.Errorf("StripString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNewRefusesAnEmptyPattern(t *testing.T) {
	if _, err := New([]string{"sid", " "}); err == nil {
		t.Fatal("an empty pattern was accepted")
	}
	var nilFilter *Filter
	if nilFilter.StripString("http://h/?utm_source=1") != "http://h/?utm_source=1" || nilFilter.Matches("sid") {
		t.Fatal("a nil filter dropped something")
	}
}

// FuzzStrip checks that a stripped URL parses, holds no matching
// parameter, keeps every other one, and strips to itself.
func FuzzStrip(f *testing.F) {
	for _, s := range []string{
		"https://shop.example/p/4711;jsessionid=A1B2?sid=x&color=red",
		"http://h/a;b=1;sid=2/c?utm_x=1&&x=&=y",
		"http://h/?%zz=1&sid",
		"http://h/p;;;?;",
	} {
		f.Add(s)
	}
	filter := mustNew(f, "sid", "utm_*", "jsessionid")
	f.Fuzz(func(t *testing.T, raw string) {
		out := filter.StripString(raw)
		if out == raw {
			return
		}
		u, err := url.Parse(out)
		if err != nil {
			t.Fatalf("StripString(%q) = %q, which does not parse: %v", raw, out, err)
		}
		for _, p := range strings.Split(u.RawQuery, "&") {
			name, _, _ := strings.Cut(p, "=")
			if n, err := url.QueryUnescape(name); err == nil && filter.Matches(n) {
				t.Fatalf("StripString(%q) = %q keeps %q", raw, out, name)
			}
		}
		if again := filter.StripString(out); again != out {
			t.Fatalf("StripString(%q) = %q, and again %q", raw, out, again)
		}
		in, _ := url.Parse(raw)
		for name := range in.Query() {
			if !filter.Matches(name) && !u.Query().Has(name) {
				t.Fatalf("StripString(%q) = %q lost %q", raw, out, name)
			}
		}
	})
}
