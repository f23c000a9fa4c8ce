package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
)

func TestRenderReadsPagesWaitForAndBlock(t *testing.T) {
	cfg, err := Parse("shop.toml", []byte(good+`
[render]
pages = "all"
wait_for = { listing = "ul.grid", item = "div.pdp h1" }
block = ["image", "font", "image"]
`))
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Render
	if !r.Renders(crawl.KindListing) || !r.Renders(crawl.KindItem) || r.Renders(crawl.KindSitemap) || r.Renders(crawl.KindRobots) {
		t.Fatalf("pages = all renders %v; want listing and item pages, never sitemaps or robots.txt", r.Kinds())
	}
	if r.WaitFor[crawl.KindListing] != "ul.grid" || r.WaitFor[crawl.KindItem] != "div.pdp h1" {
		t.Fatalf("wait_for = %v", r.WaitFor)
	}
	if !slices.Equal(r.Block, []string{"image", "font"}) || r.Line != 10 {
		t.Fatalf("block = %v, line %d; want [image font] once each, and the table's line 10", r.Block, r.Line)
	}

	cfg, err = Parse("shop.toml", []byte(good+"[render]\npages = \"item\"\nwait_for = \"h1\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Render; r.Renders(crawl.KindListing) || r.WaitFor[crawl.KindItem] != "h1" || len(r.WaitFor) != 1 ||
		!slices.Equal(r.Block, DefaultRenderBlock) {
		t.Fatalf("pages = item: %+v; want item pages only, waiting for h1, the default block", r)
	}
	cfg, err = Parse("shop.toml", []byte(good+"[render]\npages = \"listing\"\nblock = []\n"))
	if err != nil || len(cfg.Render.Block) != 0 || cfg.Render.Block == nil {
		t.Fatalf("block = [] loads everything: %+v (%v)", cfg.Render, err)
	}
	if cfg, err = Parse("shop.toml", []byte(good)); err != nil || cfg.Render != nil || cfg.Render.Renders(crawl.KindItem) {
		t.Fatalf("no [render]: %+v (%v)", cfg.Render, err)
	}
}

func TestRenderMistakesNameLineAndKey(t *testing.T) {
	cases := []struct{ name, table, want string }{
		{"no pages", "[render]\nwait_for = \"h1\"\n", `shop.toml:9: render.pages: required`},
		{"bad pages", "[render]\npages = \"items\"\n", `shop.toml:10: render.pages: must be "item", "listing" or "all", got "items"`},
		{"document blocked", "[render]\npages = \"item\"\nblock = [\"image\", \"document\"]\n", `shop.toml:11: render.block: entry 2: "document" is not a resource type`},
		{"bad selector", "[render]\npages = \"item\"\nwait_for = \"div[\"\n", `shop.toml:11: render.wait_for: "div["`},
		{"wait for a kind not rendered", "[render]\npages = \"item\"\nwait_for = { listing = \"ul\" }\n", `render.wait_for.listing: render.pages = "item" does not render listing pages`},
		{"unknown wait_for kind", "[render]\npages = \"item\"\nwait_for = { sitemap = \"ul\" }\n", `render.wait_for.sitemap: unknown key`},
		{"unknown key", "[render]\npages = \"item\"\nwaitfor = \"h1\"\n", `shop.toml:11: render.waitfor: unknown key`},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("shop.toml", []byte(good+tt.table))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestRenderOnlyHTMLPages: a browser renders HTML pages loaded with a GET.
func TestRenderOnlyHTMLPages(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"json listing", strings.Replace(good, `item_links = "article h3 a"`, "format = \"json\"\nitem_links = \"items[].url\"", 1) +
			"[render]\npages = \"listing\"\n", `render.pages: "listing" renders listing pages, and listing.format is json`},
		{"json items", good + "[item]\nformat = \"json\"\n[render]\npages = \"all\"\n", `"all" renders item pages, and item.format is json`},
		{"post listing", good + "[listing.request]\nmethod = \"POST\"\nbody = '{}'\n[render]\npages = \"all\"\n", `listing.request is a POST`},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("shop.toml", []byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
	// A JSON listing with rendered item pages is fine.
	doc := strings.Replace(good, `item_links = "article h3 a"`, "format = \"json\"\nitem_links = \"items[].url\"", 1) + "[render]\npages = \"item\"\n"
	if _, err := Parse("shop.toml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
}
