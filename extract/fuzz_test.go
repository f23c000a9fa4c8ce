package extract

import (
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// fuzzSpec exercises every type and option, in cards mode too; the item
// is keyed by its URL.
func fuzzSpec() Spec {
	return Spec{
		Listing: ListingSpec{ItemLinks: "a, h3 a", NextPage: "li.next a", Items: "article, li"},
		Fields: []FieldSpec{
			{Name: "title", CSS: []string{"h1, h3"}, Required: true},
			{Name: "price", CSS: []string{"p"}, Type: TypeFloat64, Regex: `[\d.,]+`},
			{Name: "stock", CSS: []string{"p, td"}, Type: TypeInt64, Regex: `(\d[\d,]*)`},
			{Name: "flag", CSS: []string{"b"}, Type: TypeBool},
			{Name: "when", CSS: []string{"time"}, Type: TypeTimestamp, Attr: "datetime"},
			{Name: "day", CSS: []string{"time"}, Type: TypeTimestamp, Format: "2 January 2006"},
			{Name: "image", CSS: []string{"img"}, Attr: "src", URL: true},
			{Name: "tags", CSS: []string{"li"}, Multiple: true},
			{Name: "links", CSS: []string{"a"}, Attr: "href", URL: true, Multiple: true},
			{Name: "nums", CSS: []string{"td, span"}, Type: TypeInt64, Multiple: true},
			{Name: "reals", CSS: []string{"span"}, Type: TypeFloat64, Multiple: true},
			{Name: "bits", CSS: []string{"b, i"}, Type: TypeBool, Multiple: true},
			{Name: "times", CSS: []string{"time"}, Type: TypeTimestamp, Multiple: true},
			{Name: "sale", CSS: []string{".promo", ".price", ":scope"}, Attr: "data-price", Type: TypeFloat64, Decimal: DecimalComma, Default: 0.5},
			{Name: "avail", CSS: []string{"p", "b"}, Type: TypeBool, Map: map[string]any{"in stock": true, "only * left": true, "*": false}},
			{Name: "left", CSS: []string{"td"}, Type: TypeInt64, Map: map[string]any{"sold out": int64(0), "?": "1"}, Default: int64(-1)},
			{Name: "pid", CSS: []string{":scope", ":scope[data-pid]"}, Attr: "data-pid", Type: TypeInt64},
			{Name: "ld_name", JSONLD: "Product", JSON: "name"},
			{Name: "ld_price", JSONLD: "Product", JSON: "offers.price || offers[0].price || offers.lowPrice", Type: TypeFloat64},
			{Name: "ld_cheap", JSONLD: "Product", JSON: "offers[?to_number(price) < `20`].sku", Multiple: true},
			{Name: "next_sku", CSS: []string{"script#__NEXT_DATA__", "div[data-product]"}, JSON: "props.pageProps.product.sku || sku", Type: TypeString},
			{Name: "next_tags", CSS: []string{"script"}, JSON: "props.pageProps.product.tags", Multiple: true},
			{Name: "data", CSS: []string{"div"}, Attr: "data-product", JSON: "@", URL: true},
		},
	}
}

// fuzzRowsSpec reads table rows as items, some fields from the page.
func fuzzRowsSpec() Spec {
	return Spec{
		Listing: ListingSpec{ItemLinks: "a", Items: "article, li"},
		Item:    ItemSpec{Rows: "tr, li"},
		Key:     "sku",
		Fields: []FieldSpec{
			{Name: "sku", CSS: []string{"td", ":scope"}, Required: true},
			{Name: "name", CSS: []string{"h1"}, Scope: ScopePage},
			{Name: "price", CSS: []string{"td + td"}, Type: TypeFloat64, Decimal: DecimalComma, Default: int64(0)},
			{Name: "ld", JSONLD: "Product", JSON: "name", Scope: ScopePage},
		},
	}
}

// fuzzKeyedSpec is fuzzSpec reading item pages only, keyed by an int64
// field, so the key's text round-trips through the value parser.
func fuzzKeyedSpec() Spec {
	spec := fuzzSpec()
	spec.Listing.Items = ""
	spec.Key = "stock"
	return spec
}

func FuzzItem(f *testing.F) {
	f.Add(fixture(f, "book.html"))
	f.Add(fixture(f, "listing.html"))
	for _, s := range []string{
		``,
		`<h1>x</h1><p>£1,234.50 (3 available)</p><b>yes</b><i>0</i>`,
		`<base href="//cdn.example/a/"><img src="../x.png"><a href="javascript:x">j</a><a href="#f">f</a>`,
		`<table><tr><td>1 000</td><td>x</td></tr></table><span>-0</span><span>1e3</span>`,
		`<time datetime="2016-03-01T10:20:30.5+01:00">1 March 2016</time><time>bad</time>`,
		`<article><h3><a href="/p/1">One</a></h3></article><li class="next"><a href="?p=2">n</a></li>`,
		"<h1>\u00a0a\tb\u3000</h1><p>\xff\xfe</p>",
		`<li class="product" data-pid="17" data-price="12,50"><p>Only 3 left</p><td>Sold out</td></li>`,
		`<script type="application/ld+json">{"@graph":[{"@type":["Product"],"name":"A \u00e9","offers":[{"price":"12.50","sku":"s"}]}]}</script>`,
		`<div data-product='{"sku": 7}'></div>`,
		nextData,
		variantsPage,
	} {
		f.Add([]byte(s))
	}
	f.Add(fixture(f, "jsonld.html"))
	f.Add(fixture(f, "offers-array.html"))
	x := mustCompile(f, fuzzSpec())
	keyed := mustCompile(f, fuzzKeyedSpec())
	rows := mustCompile(f, fuzzRowsSpec())
	page := mustURL(f, "https://fuzz.example/dir/page?q=1")
	f.Fuzz(func(t *testing.T, body []byte) {
		doc, err := x.Parse(body)
		if err != nil {
			return
		}
		items, unusable := rows.Items(doc, page)
		for _, it := range items {
			checkItem(t, rows, it)
			checkUsable(t, rows, it, page.String())
		}
		checkUnusable(t, unusable)
		l := rows.Listing(doc, page)
		for _, it := range l.Items {
			checkItem(t, rows, it)
			checkUsable(t, rows, it, it.URL)
		}
		checkUnusable(t, l.Unusable)
		for _, x := range []*Extractor{x, keyed} {
			it, err := x.Item(doc, page)
			if err != nil && !IsUnusable(err) {
				t.Fatalf("Item: unexpected error %v", err)
			}
			checkItem(t, x, it)
			if err == nil {
				checkUsable(t, x, it, page.String())
			}
			l := x.Listing(doc, page)
			for _, it := range l.Items {
				checkItem(t, x, it)
				checkUsable(t, x, it, it.URL)
			}
			for _, u := range l.Unusable {
				if u.Err == nil || len(u.Err.Missing) == 0 {
					t.Fatalf("unusable card without missing fields: %+v", u)
				}
			}
			checkLinks(t, l)
		}
	})
}

// checkUnusable asserts that each unusable item says why: missing fields,
// or for a page or card without rows, a reason.
func checkUnusable(t *testing.T, unusable []Unusable) {
	t.Helper()
	for _, u := range unusable {
		if u.Err == nil || u.URL != u.Err.URL || len(u.Err.Missing) == 0 && len(u.Err.Reasons) == 0 {
			t.Fatalf("unusable item without a reason: %+v", u)
		}
	}
}

// checkLinks asserts that a listing's links are absolute, without
// fragments or script URLs, and unique.
func checkLinks(t *testing.T, l Listing) {
	t.Helper()
	for _, links := range [][]string{l.ItemLinks, l.NextPages} {
		for i, link := range links {
			u, err := url.Parse(link)
			if err != nil || !u.IsAbs() || u.Fragment != "" || strings.HasPrefix(link, "javascript:") {
				t.Fatalf("bad link %q", link)
			}
			if slices.Contains(links[:i], link) {
				t.Fatalf("link %q listed twice", link)
			}
		}
	}
}

// FuzzJSON reads arbitrary JSON documents as listing pages (links, cards,
// cards with rows) and as item pages: whatever the document, items keep
// the value invariants and links are absolute.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{
		apiPage,
		`{"items": [{"url": "/p/1"}, {"url": "/p/2#x"}], "next": null}`,
		`{"products": [{"title": "Boot", "handle": "boot", "variants": [{"sku": "B-40", "price": "89.90", "available": true}]}], "next": "/p?page=2"}`,
		`{"product": {"title": "Boot", "variants": [{"sku": "B-1", "price": 12.5}, null, {"sku": 9007199254740993}]}}`,
		`[{"url": "javascript:x"}, {"url": "//cdn.example/a"}, 1, "s", null, true]`,
		`{"items": {"id": 1e400, "price": -0, "url": ["a", {"b": 1}]}}`,
		`"\u00e9\/"`,
		`{"a": [[[[[[]]]]]]}`,
	} {
		f.Add([]byte(s))
	}
	card := []FieldSpec{
		{Name: "id", JSON: "id", Type: TypeInt64},
		{Name: "name", JSON: "name || title", Required: true},
		{Name: "price", JSON: "price", Type: TypeFloat64, Decimal: DecimalComma, Default: 0.0},
		{Name: "link", JSON: "url", URL: true},
		{Name: "tags", JSON: "tags", Multiple: true},
		{Name: "available", JSON: "available", Type: TypeBool, Map: map[string]any{"*": true}},
		{Name: "cheap", JSON: "price < `20`", Type: TypeBool},
	}
	specs := []Spec{
		{Listing: ListingSpec{Format: FormatJSON, ItemLinks: "items[].url || [].url || links", NextPage: "next", MaxLinks: 5},
			Fields: []FieldSpec{{Name: "title", CSS: []string{"h1"}}}},
		{Listing: ListingSpec{Format: FormatJSON, Items: "items || products || @", ItemLinks: "url", NextPage: "next"}, Fields: card},
		{Listing: ListingSpec{Format: FormatJSON, Items: "products", NextPage: "next"}, Item: ItemSpec{Rows: "variants"}, Key: "sku",
			Fields: []FieldSpec{{Name: "sku", JSON: "sku"}, {Name: "title", JSON: "title", Scope: ScopePage}, {Name: "price", JSON: "price", Type: TypeFloat64}}},
		{Item: ItemSpec{Format: FormatJSON, Rows: "product.variants"}, Key: "sku",
			Fields: []FieldSpec{{Name: "sku", JSON: "sku", Type: TypeInt64}, {Name: "title", JSON: "product.title", Scope: ScopePage}}},
		{Item: ItemSpec{Format: FormatJSON}, Fields: card},
	}
	xs := make([]*Extractor, len(specs))
	for i, spec := range specs {
		xs[i] = mustCompile(f, spec)
	}
	page := mustURL(f, "https://fuzz.example/api/list?page=1")
	f.Fuzz(func(t *testing.T, body []byte) {
		doc, err := xs[0].ParseJSON(body)
		if err != nil {
			return
		}
		for _, x := range xs {
			l := x.ListingJSON(doc, page)
			checkLinks(t, l)
			if max := x.spec.Listing.MaxLinks; max > 0 && (len(l.ItemLinks) > max || len(l.NextPages) > max) {
				t.Fatalf("more than %d links: %+v", max, l)
			}
			for _, it := range l.Items {
				checkItem(t, x, it)
				checkUsable(t, x, it, it.URL)
			}
			checkUnusable(t, l.Unusable)
			items, unusable := x.ItemsJSON(doc, page)
			for _, it := range items {
				checkItem(t, x, it)
				checkUsable(t, x, it, page.String())
			}
			checkUnusable(t, unusable)
		}
	})
}

// checkUsable asserts what a usable item promises: every required field
// (the key field too) has a value, and Key is the key field's value as
// text, which parses back to that value, or else the item's URL.
func checkUsable(t *testing.T, x *Extractor, it Item, itemURL string) {
	t.Helper()
	for i, f := range x.fields {
		if !f.required {
			continue
		}
		if v := it.Values[i]; v == nil || (f.Multiple && reflect.ValueOf(v).Len() == 0) {
			t.Fatalf("usable item lacks required field %s: %+v", f.Name, it)
		}
	}
	if it.URL != itemURL {
		t.Fatalf("item URL %q, want %q", it.URL, itemURL)
	}
	if x.key < 0 {
		if it.Key != it.URL {
			t.Fatalf("unkeyed item has key %q, URL %q", it.Key, it.URL)
		}
		return
	}
	if it.Key != formatKey(it.Values[x.key]) {
		t.Fatalf("key %q is not the text of %#v", it.Key, it.Values[x.key])
	}
	if x.fields[x.key].Type != TypeInt64 {
		return
	}
	if n, ok := parseInt(it.Key); !ok || n != it.Values[x.key] {
		t.Fatalf("key %q does not parse back to %#v", it.Key, it.Values[x.key])
	}
}

// checkItem asserts the value invariants and a deterministic Hash.
func checkItem(t *testing.T, x *Extractor, it Item) {
	t.Helper()
	fields := x.Fields()
	if len(it.Values) != len(fields) {
		t.Fatalf("%d values for %d fields", len(it.Values), len(fields))
	}
	for i, v := range it.Values {
		fs := fields[i]
		if v == nil {
			if fs.Multiple && !it.TypeError(i) {
				t.Fatalf("%s: nil list without a type error", fs.Name)
			}
			continue
		}
		rv := reflect.ValueOf(v)
		if fs.Multiple {
			if rv.Kind() != reflect.Slice || rv.IsNil() {
				t.Fatalf("%s: %T is not a non-nil list", fs.Name, v)
			}
			for j := 0; j < rv.Len(); j++ {
				checkValue(t, fs, rv.Index(j).Interface())
			}
			continue
		}
		checkValue(t, fs, v)
	}
	h := it.Hash()
	if len(h) != 32 || h != it.Hash() {
		t.Fatalf("Hash not deterministic or malformed: %q", h)
	}
	clone := it
	clone.Values = append([]any(nil), it.Values...)
	if clone.Hash() != h {
		t.Fatal("Hash differs for equal values")
	}
}

func checkValue(t *testing.T, fs FieldSpec, v any) {
	t.Helper()
	want := map[Type]reflect.Type{
		TypeString: reflect.TypeOf(""), TypeInt64: reflect.TypeOf(int64(0)), TypeFloat64: reflect.TypeOf(0.0),
		TypeBool: reflect.TypeOf(false), TypeTimestamp: reflect.TypeOf(time.Time{}),
	}[fs.Type]
	if reflect.TypeOf(v) != want {
		t.Fatalf("%s: value %#v is %T, want %v", fs.Name, v, v, want)
	}
	switch v := v.(type) {
	case string:
		if v == "" && fs.Default != "" {
			t.Fatalf("%s: empty string value", fs.Name)
		}
		if !fs.URL && (v[0] == ' ' || v[len(v)-1] == ' ' || strings.Contains(v, "  ")) {
			t.Fatalf("%s: %q is not normalised", fs.Name, v)
		}
	case time.Time:
		if v.Location() != time.UTC {
			t.Fatalf("%s: %v not in UTC", fs.Name, v)
		}
	}
}
