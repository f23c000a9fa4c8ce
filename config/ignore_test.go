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
