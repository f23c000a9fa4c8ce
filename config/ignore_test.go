package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/urlparams"
)

const ignoreHead = `name = "shop"
start_urls = ["https://shop.example/search"]
`

const ignoreTail = `
[listing]
item_links = "a.p"
pages = { param = "page" }

[item.fields]
title = { css = "h1" }
`

func TestIgnoreParams(t *testing.T) {
	cfg, err := Parse("shop.toml", []byte(ignoreHead+`ignore_params = ["osCsid", "ref_*"]`+ignoreTail))
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(urlparams.Defaults), "osCsid", "ref_*")
	if !slices.Equal(cfg.IgnoreParams, want) || !slices.Equal(cfg.Extract.IgnoreParams, want) {
		t.Fatalf("IgnoreParams = %q, want %q", cfg.IgnoreParams, want)
	}
	cfg, err = Parse("shop.toml", []byte(ignoreHead+"ignore_params_defaults = false\nignore_params = [\"sid\"]"+ignoreTail))
	if err != nil || !slices.Equal(cfg.IgnoreParams, []string{"sid"}) {
		t.Fatalf("defaults off: %q, %v", cfg.IgnoreParams, err)
	}
	for _, tt := range []struct{ toml, want string }{
		{`ignore_params = ["sid", ""]`, `shop.toml:3: ignore_params: entry 2 is empty`},
		{`ignore_params = ["p*"]`, `shop.toml:3: ignore_params: a pattern drops "page", the parameter listing.pages counts with`},
	} {
		_, err := Parse("shop.toml", []byte(ignoreHead+tt.toml+ignoreTail))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.toml, err, tt.want)
		}
	}
}

func TestNextPageHeaderAndPagesStep(t *testing.T) {
	const head = "name = \"shop\"\nstart_urls = [\"https://shop.example/api\"]\n\n[listing]\nformat = \"json\"\nitem_links = \"[].url\"\n"
	const tail = "\n[item.fields]\ntitle = { css = \"h1\" }\n"
	cfg, err := Parse("shop.toml", []byte(head+`next_page = { header = "Link" }`+tail))
	if err != nil || !cfg.Sources.LinkHeader || cfg.Extract.Listing.NextPage != "" {
		t.Fatalf("header = Link: %+v, %v", cfg.Sources, err)
	}
	cfg, err = Parse("shop.toml", []byte(head+`pages = { param = "offset", start = 0, step = 24 }`+tail))
	if err != nil || *cfg.Sources.Pages != (Pages{Param: "offset", Start: 0, Step: 24}) {
		t.Fatalf("pages with a step: %+v, %v", cfg.Sources.Pages, err)
	}
	for _, tt := range []struct{ toml, want string }{
		{`next_page = { header = "etag" }`, `shop.toml:7: listing.next_page.header: must be "link"`},
		{`next_page = { header = "link", css = "a" }`, `shop.toml:7: listing.next_page: header goes alone`},
		{`pages = { param = "offset", step = 0 }`, `shop.toml:7: listing.pages.step: must be a positive integer`},
	} {
		_, err := Parse("shop.toml", []byte(head+tt.toml+tail))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.toml, err, tt.want)
		}
	}
}

func TestListingRequest(t *testing.T) {
	t.Setenv("SHOP_TOKEN", "tok")
	const head = "name = \"shop\"\nstart_urls = [\"https://shop.example/api/graphql\"]\n\n[listing]\nformat = \"json\"\nitem_links = \"data.items[].url\"\n"
	const fields = "\n[item.fields]\ntitle = { css = \"h1\" }\n"
	good := head + `next_page = { json = "data.next", body = "variables.after" }
[listing.request]
method = "post"
headers = { "X-Token" = "${SHOP_TOKEN}" }
body = '{"query": "query($$after: String) { items(after: $after) }", "variables": {"after": null}}'
` + fields
	cfg, err := Parse("shop.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	lr := cfg.ListingRequest
	if lr.Method != "POST" || lr.Body.Value() != `{"query": "query($after: String) { items(after: $after) }", "variables": {"after": null}}` ||
		lr.Header().Get("X-Token") != "tok" || lr.Header().Get("Content-Type") != "application/json" ||
		!slices.Equal(cfg.Sources.Cursor.BodyPath, []string{"variables", "after"}) || !cfg.Extract.Listing.NextCursor {
		t.Fatalf("listing request %+v, body %q, cursor %+v", lr, lr.Body.Value(), cfg.Sources.Cursor)
	}
	for _, tt := range []struct{ toml, want string }{
		{head + "[listing.request]\nmethod = \"PUT\"\n" + fields, `shop.toml:8: listing.request.method: must be "GET" or "POST"`},
		{head + "[listing.request]\nbody = \"{}\"\n" + fields, `shop.toml:8: listing.request.body: a GET request has no body`},
		{head + "[listing.request]\nmethod = \"POST\"\nbody = '${NOPE_UNSET}'\n" + fields, `listing.request.body: ${NOPE_UNSET} is not set`},
		{head + `next_page = { json = "next" }` + fields, `shop.toml:7: listing.next_page: a json next page names where its value goes`},
		{head + `next_page = { json = "next", param = "c", body = "a" }` + fields, `listing.next_page: a json next page names where its value goes`},
		{head + `next_page = { json = "next", body = "variables.after" }` + fields, `listing.next_page.body: the cursor goes into the body of a POST listing request`},
		{head + `next_page = { json = "next", param = "utm_cursor" }` + fields, `ignore_params_defaults: a pattern drops "utm_cursor"`},
		{strings.Replace(head, `format = "json"`, `format = "html"`, 1) + `next_page = { json = "next", param = "c" }` + fields, `listing.next_page: json with param or body reads a json listing`},
	} {
		_, err := Parse("shop.toml", []byte(tt.toml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s\nerr = %v, want %q", tt.toml, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "tok") {
			t.Errorf("an error quotes the token: %v", err)
		}
	}
}

func TestScriptSources(t *testing.T) {
	const head = "name = \"shop\"\nstart_urls = [\"https://shop.example/\"]\n\n[listing]\n"
	const item = "\n[item.fields]\ntitle = { js = \"window.__STATE__\", json = \"product.title\" }\n"
	cfg, err := Parse("shop.toml", []byte(head+`item_links = { js = "window.__STATE__", json = "catalog.items[].url" }`+item))
	if err != nil || cfg.Extract.Listing.ItemLinksScript == nil || cfg.Extract.Fields[0].JS != "window.__STATE__" {
		t.Fatalf("%+v, %v", cfg, err)
	}
	for _, tt := range []struct{ toml, want string }{
		{head + `items = { css = "script#__NEXT_DATA__" }` + "\n[item.fields]\ntitle = { json = \"name\" }\n", `shop.toml:5: listing.items.json: required with css`},
		{head + `items = { css = "script", js = "x" }` + "\n[item.fields]\ntitle = { json = \"name\" }\n", `listing.items.js: a table has one source`},
		{head + `item_links = { js = "document.x()" }` + item, `listing.item_links.js: "document.x()" is not a dotted JavaScript name`},
		{head + "format = \"json\"\n" + `items = { js = "x", json = "a" }` + "\n[item.fields]\ntitle = { json = \"name\" }\n", `a table reads JSON inside an HTML listing page`},
		{head + `item_links = "a"` + "\n[item.fields]\ntitle = { js = \"x\", css = \"h1\" }\n", `item.fields.title.js: a field has one source`},
		{head + "item_links = \"a\"\n[item]\nformat = \"json\"\n[item.fields]\ntitle = { js = \"x\" }\n", `item.fields.title.js: items are read from JSON documents here`},
	} {
		_, err := Parse("shop.toml", []byte(tt.toml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s\nerr = %v, want %q", tt.toml, err, tt.want)
		}
	}
}

func TestEveryProblemIsReportedAtOnce(t *testing.T) {
	_, err := Parse("books.toml", []byte(`name = "books"
start_urls = ["http://127.0.0.1:8390/"]
colour = "red"

[policy]
timeout = "soon"
concurency = 3

[listing]
item_links = "a"

[item.fields]
title = { css = "h1", type = "float" }
`))
	want := []string{
		"books.toml:3: colour: unknown key",
		`books.toml:6: policy.timeout: invalid duration "soon"`,
		`books.toml:7: policy.concurency: unknown key (did you mean "concurrency"?)`,
		`books.toml:13: item.fields.title.type: unknown type "float"`,
	}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("err = %v\nwant it to hold %q", err, w)
		}
	}
}
