package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/internal/testkit/docs"
)

// realSite uses every key of SPEC 6b's [listing], [item] and
// [item.fields].
const realSite = `name = "shop"
start_urls = ["https://shop.example/api/products?page=1"]

[listing]
format = "json"
items = "items"
item_links = "url"
next_page = "next"

[item]
key = "sku"
rows = "variants"

[item.fields]
sku      = { json = "sku", required = true }
name     = { json = "title", scope = "page" }
price    = { json = "price", type = "float64", decimal = "," }
in_stock = { json = "availability", type = "bool", map = { "In stock" = true, "Only * left" = true, "*" = false } }
stock    = { json = "stock", type = "int64", map = { "Sold out" = 0 }, default = -1 }
colour   = { json = "colour", default = "" }
launch   = { json = "launch", type = "timestamp", format = "2 January 2006" }
link     = { json = "url", url = true }
`

func TestRealSiteKeys(t *testing.T) {
	cfg, err := Parse("shop.toml", []byte(realSite))
	if err != nil {
		t.Fatal(err)
	}
	spec := cfg.Extract
	if spec.Listing.Format != extract.FormatJSON || spec.Listing.Items != "items" || spec.Listing.ItemLinks != "url" || spec.Listing.NextPage != "next" {
		t.Errorf("listing = %+v", spec.Listing)
	}
	if spec.Item != (extract.ItemSpec{Rows: "variants"}) || spec.Key != "sku" {
		t.Errorf("item = %+v, key %q", spec.Item, spec.Key)
	}
	want := []extract.FieldSpec{
		{Name: "sku", JSON: "sku", Required: true},
		{Name: "name", JSON: "title", Scope: "page"},
		{Name: "price", JSON: "price", Type: "float64", Decimal: ","},
		{Name: "in_stock", JSON: "availability", Type: "bool", Map: map[string]any{"In stock": true, "Only * left": true, "*": false}},
		{Name: "stock", JSON: "stock", Type: "int64", Map: map[string]any{"Sold out": int64(0)}, Default: int64(-1)},
		{Name: "colour", JSON: "colour", Default: ""},
		{Name: "launch", JSON: "launch", Type: "timestamp", Format: "2 January 2006"},
		{Name: "link", JSON: "url", URL: true},
	}
	if !reflect.DeepEqual(spec.Fields, want) {
		t.Errorf("fields =\n%#v\nwant\n%#v", spec.Fields, want)
	}
	if _, err := extract.Compile(spec); err != nil {
		t.Errorf("Compile: %v", err)
	}
}

func TestHTMLSiteKeys(t *testing.T) {
	cfg, err := Parse("shop.toml", []byte(`name = "shop"
start_urls = ["https://shop.example/"]
[listing]
item_links = "article h3 a"
next_page = { css = "#grid", attr = "data-next-api" }
[item.fields]
name  = { jsonld = "Product", json = "name", required = true }
price = { jsonld = "Product", json = "offers.price || offers[0].price || offers.lowPrice", type = "float64" }
sku   = { css = "script#__NEXT_DATA__", json = "props.pageProps.product.sku" }
eur   = { css = [".promo .amount", ".price-regular .amount"], type = "float64", decimal = "," }
pid   = { css = ":scope", attr = "data-pid" }
`))
	if err != nil {
		t.Fatal(err)
	}
	if l := cfg.Extract.Listing; l.NextPage != "#grid" || l.NextPageAttr != "data-next-api" {
		t.Errorf("listing = %+v", l)
	}
	if f := cfg.Extract.Fields[3]; !reflect.DeepEqual(f.CSS, []string{".promo .amount", ".price-regular .amount"}) || f.Decimal != "," {
		t.Errorf("eur = %+v", f)
	}
	if f := cfg.Extract.Fields[0]; f.JSONLD != "Product" || f.JSON != "name" || f.CSS != nil {
		t.Errorf("name = %+v", f)
	}
}

// TestFieldKeyErrors checks that each mistake in the new keys names the
// file, the line and the key.
func TestFieldKeyErrors(t *testing.T) {
	const head = "name = \"shop\"\nstart_urls = [\"https://shop.example/\"]\n[listing]\nitem_links = \"a\"\n" // lines 1-4
	field := func(f string) string { return head + "[item.fields]\n" + f + "\n" }                             // the field on line 6
	cases := []struct {
		name, doc string
		line      int
		key, msg  string
	}{
		{"bad decimal", field(`price = { css = "p", type = "float64", decimal = ";" }`), 6, "item.fields.price.decimal", `must be "." or ","`},
		{"decimal on a string", field(`price = { css = "p", decimal = "," }`), 6, "item.fields.price.decimal", "only int64 and float64"},
		{"css a number", field(`t = { css = 3 }`), 6, "item.fields.t.css", "must be a selector or a list of selectors, got an integer"},
		{"css empty list", field(`t = { css = [] }`), 6, "item.fields.t.css", "empty list"},
		{"css list entry not a string", field(`t = { css = ["h1", 2] }`), 6, "item.fields.t.css", "entry 2 must be a selector string"},
		{"css list entry bad", field(`t = { css = ["h1", "h2["] }`), 6, "item.fields.t.css", "selector 2: invalid selector"},
		{":scope with a combinator", field(`t = { css = ":scope > td" }`), 6, "item.fields.t.css", `only ":scope" alone`},
		{"map value of another type", field(`stock = { css = "td", type = "int64", map = { "Sold out" = 0.5 } }`), 6, "item.fields.stock.map", `"Sold out": 0.5 is a float, not an int64`},
		{"map value an array", field(`stock = { css = "td", type = "int64", map = { "x" = [1] } }`), 6, "item.fields.stock.map", `"x": must be a string, a number or a boolean, got an array`},
		{"map value text not of the type", field(`ok = { css = "td", type = "bool", map = { "x" = "perhaps" } }`), 6, "item.fields.ok.map", `"perhaps" is not a valid bool`},
		{"map keys alike", field(`ok = { css = "td", type = "bool", map = { "In stock" = true, "in stock" = false } }`), 6, "item.fields.ok.map", "same key"},
		{"map not a table", field(`ok = { css = "td", map = "x" }`), 6, "item.fields.ok", "cannot decode"},
		{"default with required", field(`t = { css = "h1", required = true, default = "x" }`), 6, "item.fields.t.default", "required field takes no default"},
		{"default of another type", field(`n = { css = "td", type = "int64", default = "many" }`), 6, "item.fields.n.default", `"many" is not a valid int64`},
		{"default a table", field(`n = { css = "td", default = { a = 1 } }`), 6, "item.fields.n.default", "got a table"},
		{"default a local date", field(`n = { css = "td", type = "timestamp", default = 2020-01-02 }`), 6, "item.fields.n.default", "write it as a string"},
		{"bad scope", field(`t = { css = "h1", scope = "card" }`), 6, "item.fields.t.scope", `must be "page"`},
		{"json alone on html", field(`t = { json = "name" }`), 6, "item.fields.t.json", "json alone reads a JSON document"},
		{"jsonld without json", field(`t = { jsonld = "Product" }`), 6, "item.fields.t.json", "required with jsonld"},
		{"jsonld and css", field(`t = { jsonld = "Product", json = "name", css = "h1" }`), 6, "item.fields.t.jsonld", "one source"},
		{"bad json", field(`t = { css = "script", json = "a[?" }`), 6, "item.fields.t.json", "invalid JMESPath expression"},
		{"no source", field(`t = { type = "int64" }`), 6, "item.fields.t.css", "required"},
		{"misspelt jsonld", field(`t = { jsnld = "Product", json = "name" }`), 6, "item.fields.t.jsnld", `did you mean "jsonld"?`},
		{"bad listing format", strings.Replace(field(`t = { css = "h1" }`), "[listing]\n", "[listing]\nformat = \"xml\"\n", 1), 4, "listing.format", `must be "html" or "json"`},
		{"bad item format", field(`t = { css = "h1" }`) + "[item]\nformat = \"jsonl\"\n", 8, "item.format", `must be "html" or "json"`},
		{"rows without a key", field(`t = { css = "h1" }`) + "[item]\nrows = \"tr\"\n", 8, "item.rows", "needs item.key"},
		{"bad rows", field(`t = { css = "h1" }`) + "[item]\nkey = \"t\"\nrows = \"tr[\"\n", 9, "item.rows", "invalid selector"},
		{"next page table without css", strings.Replace(field(`t = { css = "h1" }`), "item_links = \"a\"", "item_links = \"a\"\nnext_page = { attr = \"data-next\" }", 1), 5, "listing.next_page", "a table needs css"},
		{"next page table unknown key", strings.Replace(field(`t = { css = "h1" }`), "item_links = \"a\"", "item_links = \"a\"\nnext_page = { css = \"#grid\", atr = \"data-next\" }", 1), 5, "listing.next_page.atr", `unknown key (did you mean "attr"?)`},
		{"next page table bad css", strings.Replace(field(`t = { css = "h1" }`), "item_links = \"a\"", "item_links = \"a\"\nnext_page = { css = \"#grid[\", attr = \"data-next\" }", 1), 5, "listing.next_page.css", "invalid selector"},
		{"next page a number", strings.Replace(field(`t = { css = "h1" }`), "item_links = \"a\"", "item_links = \"a\"\nnext_page = 5", 1), 5, "listing.next_page", "must be a selector or a table"},
		{"next page attr on json", strings.Replace(field(`t = { json = "name" }`), "[listing]\n", "[listing]\nformat = \"json\"\nitems = \"items\"\nnext_page = { css = \"#grid\", attr = \"x\" }\n", 1), 6, "listing.next_page.attr", "only for an html listing"},
		{"json listing bad next", strings.Replace(field(`t = { json = "name" }`), "[listing]\n", "[listing]\nformat = \"json\"\nitems = \"items\"\nnext_page = \"next[\"\n", 1), 6, "listing.next_page", "invalid JMESPath"},
		{"css on json cards", strings.Replace(field(`t = { css = "h1" }`), "[listing]\n", "[listing]\nformat = \"json\"\nitems = \"items\"\n", 1), 8, "item.fields.t.css", "items are read from JSON documents"},
		{"no item links", strings.Replace(field(`t = { css = "h1" }`), "item_links = \"a\"", "next_page = \"a\"", 1), 3, "listing.item_links", "required unless listing.items or listing.sitemaps is set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("site.toml", []byte(tc.doc))
			es := AsErrors(err)
			if len(es) == 0 {
				t.Fatalf("accepted, or an error without location: %v\n%s", err, tc.doc)
			}
			var found *Error
			for _, e := range es {
				if e.Key == tc.key {
					found = e
				}
			}
			if found == nil {
				t.Fatalf("no error for key %q in:\n%v", tc.key, err)
			}
			if found.File != "site.toml" || found.Line != tc.line || !strings.Contains(found.Msg, tc.msg) {
				t.Fatalf("got %v; want site.toml:%d: %s: ...%s...", found, tc.line, tc.key, tc.msg)
			}
		})
	}
}

func TestDecimalErrorText(t *testing.T) {
	doc := "name = \"books\"\nstart_urls = [\"http://127.0.0.1:1/\"]\n[listing]\nitem_links = \"a\"\n[item.fields]\n" +
		strings.Repeat("\n", 8) + "price = { css = \"p\", type = \"float64\", decimal = \";\" }\n"
	_, err := Parse("books.toml", []byte(doc))
	if want := `books.toml:14: item.fields.price.decimal: must be "." or ","`; err == nil || err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

// TestReadmeFieldSources parses the documentation's example of field
// sources (docs/config.md), so the documentation stays a config that loads.
func TestReadmeFieldSources(t *testing.T) {
	pages, err := docs.Pages("..")
	if err != nil {
		t.Fatal(err)
	}
	var block string
	for _, p := range pages {
		if _, after, ok := strings.Cut(p.Text, "A field has one source, then runs through"); ok {
			if bs := (docs.Page{Path: p.Path, Text: after}).Blocks(); len(bs) > 0 && bs[0].Lang == "toml" {
				block = bs[0].Text
			}
			break
		}
	}
	if block == "" {
		t.Fatal("the documentation has no toml block of field sources")
	}
	doc := "name = \"shop\"\nstart_urls = [\"https://shop.example/\"]\n[listing]\nitem_links = \"a\"\n" + block
	cfg, err := Parse("readme.toml", []byte(doc))
	if err != nil {
		t.Fatalf("the documentation's field sources do not load: %v\n%s", err, doc)
	}
	if len(cfg.Extract.Fields) != 9 {
		t.Errorf("%d fields", len(cfg.Extract.Fields))
	}
}
