package extract

import (
	"reflect"
	"testing"
)

func TestListingCardsFixture(t *testing.T) {
	x := mustCompile(t, cardSpec())
	l := x.Listing(mustParse(t, x, string(fixture(t, "listing.html"))), mustURL(t, "https://books.example.com/index.html"))
	if len(l.Items) != 20 || len(l.Unusable) != 0 {
		t.Fatalf("got %d items, %d unusable; want 20, 0", len(l.Items), len(l.Unusable))
	}
	if l.ItemLinks != nil {
		t.Errorf("links inside cards returned as ItemLinks: %q", l.ItemLinks)
	}
	if want := []string{"https://books.example.com/catalogue/page-2.html"}; !reflect.DeepEqual(l.NextPages, want) {
		t.Errorf("NextPages = %q", l.NextPages)
	}
	first := Item{
		Key:    "https://books.example.com/catalogue/a-light-in-the-attic_1000/index.html",
		URL:    "https://books.example.com/catalogue/a-light-in-the-attic_1000/index.html",
		Values: []any{"A Light in the Attic", 10.0, "One", "https://books.example.com/media/00.jpg"},
	}
	if !reflect.DeepEqual(l.Items[0], first) {
		t.Errorf("first card =\n%#v\nwant\n%#v", l.Items[0], first)
	}
	if got := l.Items[19].Values[0]; got != "It's Only the Himalayas" {
		t.Errorf("last card title %q", got)
	}
}

func TestListingCards(t *testing.T) {
	const page = "https://shop.example.com/list/"
	body := `
<a class="item" href="/outside">outside any card</a>
<div class="card"><a class="item" href="/p/1#x">One</a><span class="price">1.50</span></div>
<div class="card"><h3>No link</h3><span class="price">2</span></div>
<div class="card"><a class="item" href="javascript:void(0)">js</a><a class="item" href="/p/3">Three</a><span class="price">n/a</span></div>
<div class="card"><a class="item" href="/p/4">Four</a></div>
<a class="item card" href="/p/5"><span class="price">5</span></a>
<a class="item" href="/p/1">again outside</a>`
	spec := Spec{
		Listing: ListingSpec{ItemLinks: "a.item", Items: ".card"},
		Fields: []FieldSpec{
			{Name: "price", CSS: []string{".price"}, Type: TypeFloat64, Required: true},
			{Name: "name", CSS: []string{"a, h3"}},
		},
	}
	x := mustCompile(t, spec)
	l := x.Listing(mustParse(t, x, body), mustURL(t, page))

	wantItems := []Item{
		{Key: "https://shop.example.com/p/1", URL: "https://shop.example.com/p/1", Values: []any{1.5, "One"}},
		{Key: page, URL: page, Values: []any{2.0, "No link"}}, // no link: the page URL
		{Key: "https://shop.example.com/p/5", URL: "https://shop.example.com/p/5", Values: []any{5.0, nil}},
	}
	if !reflect.DeepEqual(noWhy(l.Items...), wantItems) {
		t.Errorf("Items =\n%#v\nwant\n%#v", l.Items, wantItems)
	}
	if len(l.Unusable) != 2 {
		t.Fatalf("Unusable = %+v, want 2", l.Unusable)
	}
	for i, want := range []string{"https://shop.example.com/p/3", "https://shop.example.com/p/4"} {
		u := l.Unusable[i]
		if u.URL != want || u.Err == nil || u.Err.URL != want || !reflect.DeepEqual(u.Err.Missing, []string{"price"}) {
			t.Errorf("Unusable[%d] = %+v (%v), want URL %s missing price", i, u, u.Err, want)
		}
	}
	if want := []string{"https://shop.example.com/outside", "https://shop.example.com/p/1"}; !reflect.DeepEqual(l.ItemLinks, want) {
		t.Errorf("ItemLinks = %q, want only links outside cards %q", l.ItemLinks, want)
	}
}

func TestListingCardsWithoutItemLinks(t *testing.T) {
	x := mustCompile(t, Spec{
		Listing: ListingSpec{Items: "li"},
		Fields:  []FieldSpec{{Name: "sku", CSS: []string{"b"}, Type: TypeInt64}},
		Key:     "sku",
	})
	l := x.Listing(mustParse(t, x, `<ul><li><b>1</b></li><li><b>2</b></li><li>none</li></ul>`), mustURL(t, "https://shop.example.com/"))
	if len(l.Items) != 2 || l.Items[0].Key != "1" || l.Items[1].Key != "2" || l.Items[1].URL != "https://shop.example.com/" {
		t.Errorf("Items = %+v", l.Items)
	}
	if len(l.Unusable) != 1 || !reflect.DeepEqual(l.Unusable[0].Err.Missing, []string{"sku"}) {
		t.Errorf("Unusable = %+v", l.Unusable)
	}
	if l.ItemLinks != nil || l.NextPages != nil {
		t.Errorf("links = %q, %q", l.ItemLinks, l.NextPages)
	}
}
