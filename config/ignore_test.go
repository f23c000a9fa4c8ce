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
