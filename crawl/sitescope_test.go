package crawl

import "testing"

// TestSiteScopeAnswersAsNormalizeAndAllows: for every link, and asked
// twice (the second answer comes from the cache), siteScope says what
// Normalize and Scope.Allows say. FuzzSiteScope tries other links.
func TestSiteScopeAnswersAsNormalizeAndAllows(t *testing.T) {
	links := []string{
		"http://shop.test/catalogue/page-2.html",
		"https://shop.test/item?id=1#x",
		"http://shop.test",
		"http://shop.test:80/a",
		"http://shop.test:8080/a",
		"https://www.shop.test/a",
		"https://notshop.test/a",
		"https://shop.test.evil/a",
		"http://other.example/a",
		"HTTP://SHOP.TEST/a",
		"http://user@shop.test/a",
		"http://[::1]:8080/a",
		"http://shop.test%2F.evil/a",
		"ftp://shop.test/a",
		"shop.test/a",
		"http:///a",
		"http://sh op.test/a",
		"http://shop.test/%zz",
		"http://shop.test/a%2",
		"http://shop.test/a%20b?q=%41#%7e",
		"http://shop.test/a b",
		"http://shop.test/a\x7fb",
		"http://shop.test/a\tb",
		"http://shop.test/a?q=%zz",
		"http://shop.test/a#%zz",
	}
	for _, domains := range [][]string{{"shop.test"}, {"other.example"}, {"::1"}, nil} {
		scope := NewScope(domains)
		var s siteScope
		for round := range 2 {
			for _, l := range links {
				_, u, ok := Normalize(l)
				want := ok && scope.Allows(u)
				if got := s.allows(scope, l); got != want {
					t.Errorf("domains %v, round %d: %s: allows = %v, want %v", domains, round, l, got, want)
				}
			}
		}
	}
}

// FuzzSiteScope: siteScope answers what Normalize and Scope.Allows do, for
// a link asked after another of its site (from the cache) and alone.
func FuzzSiteScope(f *testing.F) {
	for _, s := range []string{"http://shop.test/a", "https://shop.test:8443/%41?x#y", "http://shop.test/%zz", "HTTP://a.b/"} {
		f.Add(s)
	}
	scope := NewScope([]string{"shop.test"})
	f.Fuzz(func(t *testing.T, link string) {
		_, u, ok := Normalize(link)
		want := ok && scope.Allows(u)
		var warm siteScope
		if site, ok := siteOf(link); ok {
			warm.allows(scope, site+"/")
		}
		var cold siteScope
		if got := warm.allows(scope, link); got != want {
			t.Errorf("%q after its site: allows = %v, want %v", link, got, want)
		}
		if got := cold.allows(scope, link); got != want {
			t.Errorf("%q: allows = %v, want %v", link, got, want)
		}
	})
}
