package config

import (
	"strings"
	"testing"
)

// jsonShop is a JSON listing config whose every JMESPath key holds an
// expression that parses but cannot run; the line of each is noted.
const jsonShop = `name = "shop"
start_urls = ["https://shop.example/api/products?page=1"]

[listing]
format = "json"
items = "products[::0]"
item_links = "lenght(products)"
next_page = "join('/')"

[item]
key = "sku"
rows = "sort_by(variants, size)"

[item.fields]
sku   = { json = "sku", required = true }
name  = { json = "upper(title, 'x')" }
price = { json = "abs('12.50')", type = "float64" }
tags  = { json = "$tags", multiple = true }
ok    = { json = "to_string(sku)" }
`

// TestJMESPathProblemsNameFileLineKey: every JMESPath expression of a
// config is checked when it loads, and each problem is reported at once
// as file:line: key: what is wrong.
func TestJMESPathProblemsNameFileLineKey(t *testing.T) {
	_, err := Parse("shop.toml", []byte(jsonShop))
	es := AsErrors(err)
	want := []struct {
		line     int
		key, msg string
	}{
		{6, "listing.items", `invalid JMESPath expression "products[::0]": slice step 0`},
		{7, "listing.item_links", "unknown function lenght() (did you mean length()?)"},
		{8, "listing.next_page", "join() takes 2 arguments, got 1"},
		{12, "item.rows", "sort_by(): argument 2 must be an expression reference, such as &size"},
		{16, "item.fields.name.json", "upper() takes 1 argument, got 2"},
		{17, "item.fields.price.json", "abs(): argument 1 is a string literal; it takes a number"},
		{18, "item.fields.tags.json", "variable $tags is not bound"},
	}
	if len(es) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(es), len(want), err)
	}
	for i, w := range want {
		e := es[i]
		if e.File != "shop.toml" || e.Line != w.line || e.Key != w.key || !strings.Contains(e.Msg, w.msg) {
			t.Errorf("problem %d = %v; want shop.toml:%d: %s: ...%s...", i+1, e, w.line, w.key, w.msg)
		}
	}
}

// TestJMESPathInHTMLSources: the expressions that read JSON inside HTML
// pages (css + json, jsonld + json) are checked too.
func TestJMESPathInHTMLSources(t *testing.T) {
	doc := `name = "shop"
start_urls = ["https://shop.example/"]
[listing]
item_links = "a"
[item.fields]
name  = { jsonld = "Product", json = "nmae || lenght(name)" }
sku   = { css = "script#__NEXT_DATA__", json = "props.pageProps.product.sku[::0]" }
`
	_, err := Parse("shop.toml", []byte(doc))
	es := AsErrors(err)
	if len(es) != 2 || es[0].Line != 6 || es[0].Key != "item.fields.name.json" || !strings.Contains(es[0].Msg, "unknown function lenght()") ||
		es[1].Line != 7 || es[1].Key != "item.fields.sku.json" || !strings.Contains(es[1].Msg, "slice step 0") {
		t.Fatalf("got:\n%v", err)
	}
}
