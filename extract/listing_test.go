package extract

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestListingLinks(t *testing.T) {
	const page = "https://shop.example.com/list/page-1.html?sort=new"
	tests := []struct {
		name  string
		spec  ListingSpec
		body  string
		links []string
		next  []string
	}{
		{
			name: "resolve, de-dup, drop fragments, skip non-links",
			spec: ListingSpec{ItemLinks: "a.item"},
			body: `<a class="item" href="b.html">1</a>
				<a class="item" href=" b.html#reviews ">dup with fragment</a>
				<a class="item" href="/top/c.html?x=1&amp;y=2">abs path</a>
				<a class="item" href="../d.html">dotdot</a>
				<a class="item" href="//cdn.example.net/e">protocol-relative</a>
				<a class="item" href="HTTP://Other.Example/F">absolute</a>
				<a class="item" href="?page=2">query only</a>
				<a class="item" href="javascript:void(0)">js</a>
				<a class="item" href=" JavaScript:alert(1)">js upper</a>
				<a class="item" href="mailto:a@example.com">mail</a>
				<a class="item" href="tel:+441234">tel</a>
				<a class="item" href="data:text/html,hi">data</a>
				<a class="item" href="">empty</a>
				<a class="item" href="   ">blank</a>
				<a class="item">no href</a>
				<a class="item" href="http://[::1">bad</a>
				<a class="item" href="b
				.html">newline inside</a>
				<a href="/not-selected">other</a>`,
			links: []string{
				"https://shop.example.com/list/b.html",
				"https://shop.example.com/top/c.html?x=1&y=2",
				"https://shop.example.com/d.html",
				"https://cdn.example.net/e",
				"http://other.example/F",
				"https://shop.example.com/list/page-1.html?page=2",
			},
		},
		{
			name:  "base href",
			spec:  ListingSpec{ItemLinks: "h3 a", NextPage: "li.next a"},
			body:  `<head><base href="https://mirror.example.org/books/"></head><h3><a href="x/1.html">1</a></h3><li class="next"><a href="page-2.html">next</a></li>`,
			links: []string{"https://mirror.example.org/books/x/1.html"},
			next:  []string{"https://mirror.example.org/books/page-2.html"},
		},
		{
			name:  "relative base href",
			spec:  ListingSpec{ItemLinks: "a"},
			body:  `<base href="/root/"><a href="x">1</a>`,
			links: []string{"https://shop.example.com/root/x"},
		},
		{
			name:  "group selector keeps document order",
			spec:  ListingSpec{ItemLinks: "a.b, a.a"},
			body:  `<a class="a" href="/1">1</a><a class="b" href="/2">2</a><a class="a b" href="/3">3</a>`,
			links: []string{"https://shop.example.com/1", "https://shop.example.com/2", "https://shop.example.com/3"},
		},
		{
			name: "next pages de-duplicated",
			spec: ListingSpec{ItemLinks: "h3 a", NextPage: "a.next"},
			body: `<a class="next" href="page-2.html">next</a><a class="next" href="page-2.html#top">next</a><a class="next" href="javascript:next()">js</a>`,
			next: []string{"https://shop.example.com/list/page-2.html"},
		},
		{
			name: "nothing matches",
			spec: ListingSpec{ItemLinks: "h3 a", NextPage: "li.next a"},
			body: `<p>empty</p>`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := mustCompile(t, Spec{Listing: tt.spec})
			l := x.Listing(mustParse(t, x, tt.body), mustURL(t, page))
			if !reflect.DeepEqual(l.ItemLinks, tt.links) {
				t.Errorf("ItemLinks =\n%q\nwant\n%q", l.ItemLinks, tt.links)
			}
			if !reflect.DeepEqual(l.NextPages, tt.next) {
				t.Errorf("NextPages = %q, want %q", l.NextPages, tt.next)
			}
			if l.Items != nil || l.Unusable != nil {
				t.Errorf("items without cards mode: %+v", l)
			}
		})
	}
}

func TestListingManyLinksDedup(t *testing.T) {
	var b strings.Builder
	var want []string
	for i := range 100 {
		fmt.Fprintf(&b, `<a href="/p/%d">x</a><a href="/p/%d#again">x</a>`, i, i)
		want = append(want, fmt.Sprintf("https://shop.example.com/p/%d", i))
	}
	fmt.Fprintf(&b, `<a href="/p/0">first again</a><a href="/p/99">last again</a>`)
	x := mustCompile(t, Spec{Listing: ListingSpec{ItemLinks: "a"}})
	l := x.Listing(mustParse(t, x, b.String()), mustURL(t, "https://shop.example.com/"))
	if !reflect.DeepEqual(l.ItemLinks, want) {
		t.Errorf("got %d links, want %d in order", len(l.ItemLinks), len(want))
	}
}

func TestListingFixture(t *testing.T) {
	x := mustCompile(t, bookSpec())
	l := x.Listing(mustParse(t, x, string(fixture(t, "listing.html"))), mustURL(t, "https://books.example.com/index.html"))
	if len(l.ItemLinks) != 20 {
		t.Fatalf("got %d item links, want 20: %q", len(l.ItemLinks), l.ItemLinks)
	}
	if l.ItemLinks[0] != "https://books.example.com/catalogue/a-light-in-the-attic_1000/index.html" {
		t.Errorf("first link %q", l.ItemLinks[0])
	}
	if want := []string{"https://books.example.com/catalogue/page-2.html"}; !reflect.DeepEqual(l.NextPages, want) {
		t.Errorf("NextPages = %q, want %q", l.NextPages, want)
	}
}

func TestListingMaxLinks(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, `<div class="card"><a class="item" href="/p/%d">x</a><b>%d</b></div><a class="item" href="/o/%d">x</a><a class="item" href="/o/%d">dup</a><a class="next" href="/n/%d">n</a>`, i, i, i, i, i)
	}
	for _, tt := range []struct {
		name                        string
		spec                        ListingSpec
		links, next, cards, dropped int
	}{
		{"no bound", ListingSpec{ItemLinks: "a.item", NextPage: "a.next"}, 200, 100, 0, 0},
		{"links and next pages", ListingSpec{ItemLinks: "a.item", NextPage: "a.next", MaxLinks: 10}, 10, 10, 0, 190 + 90},
		{"below the dedup switch", ListingSpec{ItemLinks: "a.item", MaxLinks: 3}, 3, 0, 0, 197},
		{"cards", ListingSpec{ItemLinks: "a.item", Items: ".card", NextPage: "a.next", MaxLinks: 40}, 40, 40, 40, 60 + 60 + 60},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := Spec{Listing: tt.spec, Fields: []FieldSpec{{Name: "n", CSS: []string{"b"}, Type: TypeInt64}}}
			x := mustCompile(t, spec)
			l := x.Listing(mustParse(t, x, b.String()), mustURL(t, "https://shop.example.com/"))
			if len(l.ItemLinks) != tt.links || len(l.NextPages) != tt.next || len(l.Items) != tt.cards || l.Dropped != tt.dropped {
				t.Fatalf("links %d, next %d, cards %d, dropped %d; want %d, %d, %d, %d",
					len(l.ItemLinks), len(l.NextPages), len(l.Items), l.Dropped, tt.links, tt.next, tt.cards, tt.dropped)
			}
			if tt.links > 0 && tt.spec.Items == "" && l.ItemLinks[0] != "https://shop.example.com/p/0" {
				t.Errorf("first link %s, want the first in document order", l.ItemLinks[0])
			}
		})
	}
}

// TestListingNextPageAttr reads a next URL held in an attribute, and a
// <link rel="next"> in <head>.
func TestListingNextPageAttr(t *testing.T) {
	const page = "https://shop.example/shoes/"
	body := `<html><head><base href="/shoes/list/"><link rel="next" href="?page=2"><link rel="prev" href="?page=0"></head><body>
<div id="grid" data-next-api="/api/products?page=2&amp;size=24"><a class="item" href="/p/1">1</a></div>
<div id="grid" class="empty"></div>
</body></html>`
	for _, tt := range []struct {
		name string
		ls   ListingSpec
		want []string
	}{
		{"data-next-api", ListingSpec{ItemLinks: "a.item", NextPage: "#grid", NextPageAttr: "data-next-api"}, []string{"https://shop.example/api/products?page=2&size=24"}},
		{"attribute case", ListingSpec{ItemLinks: "a.item", NextPage: "#grid", NextPageAttr: "Data-Next-API"}, []string{"https://shop.example/api/products?page=2&size=24"}},
		{"link rel next in head", ListingSpec{ItemLinks: "a.item", NextPage: "link[rel=next]"}, []string{"https://shop.example/shoes/list/?page=2"}},
		{"element without the attribute", ListingSpec{ItemLinks: "a.item", NextPage: "#grid", NextPageAttr: "data-next"}, nil},
	} {
		x := mustCompile(t, Spec{Listing: tt.ls})
		l := x.Listing(mustParse(t, x, body), mustURL(t, page))
		if !reflect.DeepEqual(l.NextPages, tt.want) || !reflect.DeepEqual(l.ItemLinks, []string{"https://shop.example/p/1"}) {
			t.Errorf("%s: next %q, links %q; want next %q", tt.name, l.NextPages, l.ItemLinks, tt.want)
		}
	}
}

// TestListingCardURLFromField: an HTML card with no link takes the first
// URL field's value.
func TestListingCardURLFromField(t *testing.T) {
	body := `<div class="card" data-url="/p/1"><img src="/i/1.jpg"><b>One</b></div><div class="card"><b>Two</b></div>`
	x := mustCompile(t, Spec{
		Listing: ListingSpec{Items: ".card"},
		Fields: []FieldSpec{
			{Name: "link", CSS: []string{":scope"}, Attr: "data-url", URL: true},
			{Name: "image", CSS: []string{"img"}, Attr: "src", URL: true},
			{Name: "name", CSS: []string{"b"}},
		},
	})
	l := x.Listing(mustParse(t, x, body), mustURL(t, "https://shop.example/list"))
	if len(l.Items) != 2 || l.Items[0].URL != "https://shop.example/p/1" || l.Items[0].Key != "https://shop.example/p/1" ||
		l.Items[1].URL != "https://shop.example/list" {
		t.Errorf("items %+v", l.Items)
	}
}
