package extract

import (
	"reflect"
	"strings"
	"testing"
)

// nextData is a Next.js-style page: the product is JSON in a script
// element, whitespace and escapes included.
const nextData = `<html><head><title>N-1</title></head><body>
<h1>Not JSON</h1>
<div class="card" data-product='{"id": 7, "name": "Card &amp; co"}'></div>
<div class="card" data-product=""></div>
<script id="__NEXT_DATA__" type="application/json">
{"props": {"pageProps": {"product": {
  "sku": "N-1",
  "title": "Line  one\nline two",
  "price": {"amount": "1.234,56", "currency": "EUR"},
  "tags": ["a", "b", null, ""],
  "stock": 0,
  "active": true,
  "html": "<b>&amp;<\/b> \u00e9",
  "launch": "3 March 2025"
}}}}
</script>
</body></html>`

func TestCSSWithJSON(t *testing.T) {
	next := func(name, expr string, t Type) FieldSpec {
		return FieldSpec{Name: name, CSS: []string{"script#__NEXT_DATA__"}, JSON: "props.pageProps.product." + expr, Type: t}
	}
	eur := next("eur", "price.amount", TypeFloat64)
	eur.Decimal = DecimalComma
	launch := next("launch", "launch", TypeTimestamp)
	launch.Format = "2 January 2006"
	tags := next("tags", "tags", "")
	tags.Multiple = true
	x := mustCompile(t, Spec{Key: "sku", Fields: []FieldSpec{
		next("sku", "sku", ""),
		next("title", "title", ""),
		eur,
		next("stock", "stock", TypeInt64),
		next("active", "active", TypeBool),
		tags,
		next("html", "html", ""),
		launch,
		next("missing", "nope", ""),
		{Name: "card_id", CSS: []string{"div.card"}, Attr: "data-product", JSON: "id", Type: TypeInt64},
		{Name: "card_name", CSS: []string{"div.card"}, Attr: "data-product", JSON: "name"},
	}})
	it, err := x.Item(mustParse(t, x, nextData), mustURL(t, testPage))
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"N-1", "Line one line two", 1234.56, int64(0), true, []string{"a", "b"}, "<b>&amp;</b> é",
		mustTime(t, "2025-03-03T00:00:00Z"), nil, int64(7), "Card & co"}
	if !reflect.DeepEqual(it.Values, want) {
		t.Errorf("values =\n%#v\nwant\n%#v", it.Values, want)
	}
	if it.Reasons != nil {
		t.Errorf("reasons %q", it.Reasons)
	}

	// Text that is not JSON is a bad value, explained.
	x = mustCompile(t, Spec{Fields: []FieldSpec{{Name: "x", CSS: []string{"h1"}, JSON: "a", Required: true}}})
	_, err = x.Item(mustParse(t, x, nextData), mustURL(t, testPage))
	if !IsUnusable(err) || !strings.Contains(err.Error(), "x: the text of a matched element is not JSON") {
		t.Errorf("err = %v, want the text not JSON", err)
	}
}

func TestCSSList(t *testing.T) {
	spec := Spec{Fields: []FieldSpec{
		{Name: "eur", CSS: []string{".promo .amount", ".price-regular .amount"}, Type: TypeFloat64, Decimal: DecimalComma, Required: true},
		{Name: "badges", CSS: []string{"ul.new li", "ul.badges li"}, Multiple: true},
		{Name: "title", CSS: []string{"h2", "h1", "title"}},
	}}
	x := mustCompile(t, spec)
	tests := []struct {
		name, body string
		want       []any
		reason     string
	}{
		{"sale price first",
			`<h1>T</h1><p class="promo"><span class="amount">1.099,00 €</span></p><p class="price-regular"><span class="amount">1.299,00 €</span></p><ul class="badges"><li>x</li></ul>`,
			[]any{1099.0, []string{"x"}, "T"}, ""},
		{"regular price when no sale",
			`<h1>T</h1><p class="price-regular"><span class="amount">1.299,00 €</span></p><ul class="new"></ul><ul class="badges"><li>x</li><li>y</li></ul>`,
			[]any{1299.0, []string{"x", "y"}, "T"}, ""},
		{"empty sale price falls back",
			`<title>Doc</title><p class="promo"><span class="amount"> </span></p><p class="price-regular"><span class="amount">5</span></p>`,
			[]any{5.0, []string{}, "Doc"}, ""},
		{"unparsable sale price falls back, unexplained",
			`<h1>T</h1><p class="promo"><span class="amount">bald!</span></p><p class="price-regular"><span class="amount">5</span></p>`,
			[]any{5.0, []string{}, "T"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it, err := x.Item(mustParse(t, x, tt.body), mustURL(t, testPage))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(it.Values, tt.want) || it.Reasons != nil {
				t.Errorf("values %#v (reasons %q), want %#v", it.Values, it.Reasons, tt.want)
			}
		})
	}
	_, err := x.Item(mustParse(t, x, `<p>none</p>`), mustURL(t, testPage))
	if !IsUnusable(err) || !strings.Contains(err.Error(), `eur: no element matches ".promo .amount" or ".price-regular .amount"`) {
		t.Errorf("err = %v", err)
	}
	_, err = x.Item(mustParse(t, x, `<p class="promo"><span class="amount">n/a</span></p>`), mustURL(t, testPage))
	if !IsUnusable(err) || !strings.Contains(err.Error(), `eur: "n/a" is not a valid float64`) {
		t.Errorf("err = %v", err)
	}
}

// TestScope reads data attributes of the card element itself.
func TestScope(t *testing.T) {
	body := `<ul>
<li class="product sale" data-pid="17" data-price="12,50"><h3><a href="/p/17">Seventeen</a></h3></li>
<li class="product" data-pid="18" data-price="9,00"><h3><a href="/p/18">Eighteen</a></h3></li>
</ul>`
	x := mustCompile(t, Spec{
		Listing: ListingSpec{Items: "li.product", ItemLinks: "h3 a"},
		Key:     "card_id",
		Fields: []FieldSpec{
			{Name: "card_id", CSS: []string{":scope"}, Attr: "data-pid", Type: TypeInt64},
			{Name: "price", CSS: []string{":scope"}, Attr: "data-price", Type: TypeFloat64, Decimal: DecimalComma},
			{Name: "sale", CSS: []string{":scope.sale"}, Attr: "class", Type: TypeBool, Map: map[string]any{"*": true}, Default: false},
			{Name: "title", CSS: []string{":scope h3"}},
		},
	})
	l := x.Listing(mustParse(t, x, body), mustURL(t, "https://shop.example/list"))
	want := []Item{
		{Key: "17", URL: "https://shop.example/p/17", Values: []any{int64(17), 12.5, true, "Seventeen"}},
		{Key: "18", URL: "https://shop.example/p/18", Values: []any{int64(18), 9.0, false, "Eighteen"}},
	}
	if !reflect.DeepEqual(noWhy(l.Items...), want) || l.Unusable != nil {
		t.Errorf("items =\n%#v\nwant\n%#v\n(unusable %+v)", l.Items, want, l.Unusable)
	}
	// On an item page without rows, :scope is the document: no attributes.
	it, err := x.Item(mustParse(t, x, body), mustURL(t, testPage))
	if !IsUnusable(err) || it.Values[3] != "Seventeen" {
		t.Errorf("item page: %#v, %v", it.Values, err)
	}
}

func TestScopeSelectors(t *testing.T) {
	for _, tt := range []struct {
		css string
		ok  bool
	}{
		{":scope", true},
		{":SCOPE", true},
		{" :scope ", true},
		{":scope.sale", true},
		{":scope[data-pid]", true},
		{":scope:not(.x)", true},
		{":scope h3 a", true},
		{":scope > h3", false},
		{":scope + li", false},
		{":scope ~ li", false},
		{":scope, h1", false},
		{":scopex", false},
		{"li:scope", false},
		{"h1, :scope", false},
	} {
		_, err := compileSelector(tt.css)
		if (err == nil) != tt.ok {
			t.Errorf("compileSelector(%q) error %v, want ok %v", tt.css, err, tt.ok)
		}
	}
}
