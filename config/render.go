package config

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/andybalholm/cascadia"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
)

// Render is the [render] table: the page kinds loaded in headless
// Chromium instead of plain HTTP (SPEC 6c, "Pages rendered by a browser").
type Render struct {
	// Pages is "listing", "item" or "all", as written.
	Pages string
	// WaitFor is the CSS selector whose first match means a page of that
	// kind has rendered; a kind without one waits for the load event and
	// 500 ms without a request in flight.
	WaitFor map[crawl.Kind]string
	// Block lists the resource types a page never loads, in the DevTools
	// protocol's names in lower case.
	Block []string
	// Line is the line of the [render] table, for errors about the browser
	// that a run finds (none found, or one that does not start).
	Line int
}

// Render's pages values.
const (
	RenderListing = "listing"
	RenderItem    = "item"
	RenderAll     = "all"
)

// DefaultRenderBlock is what a [render] table without block never loads.
var DefaultRenderBlock = []string{"image", "font", "media", "stylesheet"}

// RenderResourceTypes are the resource types block may name.
var RenderResourceTypes = []string{"stylesheet", "image", "media", "font", "script", "xhr", "fetch", "eventsource",
	"websocket", "manifest", "texttrack", "ping", "prefetch", "other"}

// Renders reports whether pages of kind k are rendered; a nil Render
// renders none.
func (r *Render) Renders(k crawl.Kind) bool {
	if r == nil {
		return false
	}
	switch k {
	case crawl.KindListing:
		return r.Pages == RenderListing || r.Pages == RenderAll
	case crawl.KindItem:
		return r.Pages == RenderItem || r.Pages == RenderAll
	}
	return false
}

// Kinds lists the page kinds rendered, listing first.
func (r *Render) Kinds() []crawl.Kind {
	var out []crawl.Kind
	for _, k := range []crawl.Kind{crawl.KindListing, crawl.KindItem} {
		if r.Renders(k) {
			out = append(out, k)
		}
	}
	return out
}

type rawRender struct {
	Pages   string    `toml:"pages"`
	WaitFor any       `toml:"wait_for"` // a string, or a table { listing, item }
	Block   *[]string `toml:"block"`
}

// render reads the [render] table, after the listing and item formats and
// the listing request are known.
func (v *validator) render(r *rawRender, cfg *Config) *Render {
	if r == nil {
		return nil
	}
	out := &Render{Pages: r.Pages, Line: v.keys.line("render"), WaitFor: map[crawl.Kind]string{}}
	switch r.Pages {
	case RenderListing, RenderItem, RenderAll:
	case "":
		v.errorf("render.pages", `required: "item", "listing" or "all"`)
		return nil
	default:
		v.errorf("render.pages", `must be "item", "listing" or "all", got %q`, r.Pages)
		return nil
	}
	if out.Renders(crawl.KindListing) {
		if cfg.Extract.Listing.Format == extract.FormatJSON {
			v.errorf("render.pages", "%q renders listing pages, and listing.format is json: a browser renders HTML pages", r.Pages)
		}
		if lr := cfg.ListingRequest; lr != nil && lr.Method == http.MethodPost {
			v.errorf("render.pages", "%q renders listing pages, and listing.request is a POST: a browser loads a page with a GET", r.Pages)
		}
	}
	if out.Renders(crawl.KindItem) && cfg.Extract.Item.Format == extract.FormatJSON {
		v.errorf("render.pages", "%q renders item pages, and item.format is json: a browser renders HTML pages", r.Pages)
	}
	v.waitFor(r.WaitFor, out)
	out.Block = slices.Clone(DefaultRenderBlock)
	if r.Block != nil {
		out.Block = []string{}
		for i, t := range *r.Block {
			if !slices.Contains(RenderResourceTypes, t) {
				v.errorf("render.block", "entry %d: %q is not a resource type; use %s", i+1, t, strings.Join(RenderResourceTypes, ", "))
				continue
			}
			if !slices.Contains(out.Block, t) {
				out.Block = append(out.Block, t)
			}
		}
	}
	return out
}

// waitFor reads wait_for: one selector for every rendered kind, or a table
// of one per kind.
func (v *validator) waitFor(raw any, out *Render) {
	set := func(key string, k crawl.Kind, sel any) {
		s, ok := sel.(string)
		if !ok {
			v.errorf(key, "must be a CSS selector string, got %T", sel)
			return
		}
		if _, err := cascadia.ParseGroup(s); err != nil {
			v.errorf(key, "%q: %v", s, err)
			return
		}
		if !out.Renders(k) {
			v.errorf(key, "render.pages = %q does not render %s pages", out.Pages, k)
			return
		}
		out.WaitFor[k] = s
	}
	switch w := raw.(type) {
	case nil:
	case string:
		for _, k := range out.Kinds() {
			set("render.wait_for", k, w)
		}
	case map[string]any:
		for name, sel := range w {
			key := "render.wait_for." + name
			switch name {
			case RenderListing:
				set(key, crawl.KindListing, sel)
			case RenderItem:
				set(key, crawl.KindItem, sel)
			default:
				v.errorf(key, "unknown key: wait_for takes listing and item")
			}
		}
	default:
		v.errorf("render.wait_for", "must be a CSS selector or a table { listing = \"...\", item = \"...\" }, got %T", raw)
	}
}

// String says what the table renders, for check and the logs.
func (r *Render) String() string {
	if r == nil {
		return "nothing rendered"
	}
	var parts []string
	for _, k := range r.Kinds() {
		p := k.String() + " pages"
		if w := r.WaitFor[k]; w != "" {
			p += fmt.Sprintf(" (wait_for %q)", w)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}
