// Package shopsites holds seventeen small in-memory shops, each built like a
// common kind of real catalog site, for end-to-end tests of the config
// language: eight of SPEC section 6b (JSON-LD product pages, microdata
// cards, sitemaps only, ?page=N listings, a JSON API, messy European
// values, a consent or token gate, variant tables), eight of section 6c
// (Shopify's products.json, the WooCommerce Store API, an offset API, a
// GraphQL storefront, a Next.js shop, a Vue storefront, an osCommerce shop
// in windows-1252, a Swiss Java shop) and one of 6c (h), a single-page
// application whose data only a browser sees. Each Shop serves a
// deterministic catalog, knows the databrew-stage config a user would
// write for it (Config) and the rows a correct crawl with that config must
// export (Truth).
//
// A Shop is an http.Handler and is safe for concurrent use.
package shopsites

import (
	"fmt"
	"net/http"
	"strings"
)

// Kind names one of the shop structures.
type Kind string

// The shop kinds. Each kind's file (jsonld.go, microdata.go, ...) says
// on its shop type what it serves, which quirks it has and on which
// products, its default and minimum size, and holds its config.
const (
	// JSONLD: product data only in <script type="application/ld+json">;
	// Options.DriftAfter applies.
	JSONLD Kind = "jsonld"
	// Microdata: items are listing cards with itemprop and data-* values;
	// the next page only in <link rel="next">.
	Microdata Kind = "microdata"
	// Sitemaps: item URLs only in sitemaps named by robots.txt.
	Sitemaps Kind = "sitemaps"
	// Params: a ?page=N listing without next links (Options.EndWith404).
	Params Kind = "params"
	// JSONAPI: an infinite-scroll JSON API (Options.API).
	JSONAPI Kind = "jsonapi"
	// Messy: European numbers, dates, availability text, missing values.
	Messy Kind = "messy"
	// Gated: a consent cookie or (Options.Token) a bearer token in front
	// of the catalog.
	Gated Kind = "gated"
	// Variants: one item per row of a product page's variant table.
	Variants Kind = "variants"
	// Shopify: a Shopify shop's /products.json?page=N, products with
	// variants and images, an empty array past the last page.
	Shopify Kind = "shopify"
	// WooCommerce: the WooCommerce Store API, a JSON array a page with the
	// next page only in a Link header (Options.API: WooStore, WooCore).
	WooCommerce Kind = "woocommerce"
	// Offset: a commercetools-style "load more" API paged by offset
	// (Options.API: OffsetPages, OffsetCursor).
	Offset Kind = "offset"
	// GraphQL: a Storefront-API-shaped GraphQL endpoint that answers only
	// POST, behind a token header (Options.Token).
	GraphQL Kind = "graphql"
	// NextJS: listing pages whose script#__NEXT_DATA__ holds every product
	// of the page.
	NextJS Kind = "nextjs"
	// Vue: a Vue storefront whose pages carry their data only in a
	// window.__INITIAL_STATE__ object literal.
	Vue Kind = "vue"
	// OsCommerce: an osCommerce shop in windows-1252 whose links carry a
	// fresh session ID (Options.SessionParam).
	OsCommerce Kind = "oscommerce"
	// Swiss: a Swiss Java shop with ;jsessionid= path parameters and
	// prices such as CHF 1'234.50.
	Swiss Kind = "swiss"
	// Rendered (s17): listing and product pages are shells a script fills
	// from a signed JSON API; only a browser sees a product
	// (Options.ServerSide, Options.ThirdParty).
	Rendered Kind = "rendered"
)

// Kinds returns every kind, in the order of the package documentation.
func Kinds() []Kind {
	return []Kind{JSONLD, Microdata, Sitemaps, Params, JSONAPI, Messy, Gated, Variants,
		Shopify, WooCommerce, Offset, GraphQL, NextJS, Vue, OsCommerce, Swiss, Rendered}
}

// The Options.API values of the JSONAPI shop.
const (
	// APIFull: /api/products?page=N items carry every field.
	APIFull = "full"
	// APILinks: API items carry only the URL of a JSON product document.
	APILinks = "links"
	// APIGrid: HTML listing pages whose grid element holds the next page's
	// URL in a data-next-api attribute; product pages embed their data in
	// script#__NEXT_DATA__.
	APIGrid = "grid"
)

// The Options.API values of the WooCommerce shop.
const (
	// WooStore: the Store API, /wp-json/wc/store/v1/products, followed by
	// its Link headers.
	WooStore = "store"
	// WooCore: WordPress core's REST route /wp-json/wp/v2/product, read
	// with pages; it answers 400 past the last page.
	WooCore = "wp"
)

// The Options.API values of the Offset shop.
const (
	// OffsetPages: ?offset=N pages, read with pages and a step.
	OffsetPages = "offset"
	// OffsetCursor: ?cursor=C pages, each naming the next one's cursor.
	OffsetCursor = "cursor"
)

// TokenEnv is the environment variable the Gated shop's bearer config
// reads its token from, and the GraphQL shop's config too.
const TokenEnv = "SHOP_TOKEN"

// ConsentCookie is the cookie the Gated shop's consent URL sets and its
// catalog pages require (value "1").
const ConsentCookie = "cc_consent"

// Options configures a Shop. The zero value is usable for every kind.
type Options struct {
	// Products is the number of products (product pages for Variants,
	// whose rows are the items); 0 means the kind's default, and each kind
	// has a minimum (see its file).
	Products int
	// PerPage is the number of products per listing page; 0 means the
	// kind's default. Sitemaps ignores it.
	PerPage int
	// EndWith404 (Params) makes the page after the last one answer 404
	// instead of a 200 "No results" page.
	EndWith404 bool
	// API chooses the variant of a kind that has several: JSONAPI takes
	// APIFull (default), APILinks or APIGrid.
	// WooCommerce takes WooStore (default) or WooCore.
	// Offset takes OffsetPages (default) or OffsetCursor.
	API string
	// Token (Gated) replaces the consent cookie gate by a bearer token
	// gate: catalog pages answer 401 unless the request carries
	// "Authorization: Bearer " + Token.
	// GraphQL requires it: the endpoint answers 401 unless the request
	// carries it in the X-Shopify-Storefront-Access-Token header.
	Token string
	// SessionParam (OsCommerce) is the name of the session ID parameter
	// the shop's links carry; "" means osCsid.
	SessionParam string
	// DriftAfter (JSONLD), when positive, makes every product page served
	// after the site's first DriftAfter requests (robots.txt not counted)
	// drop its Product JSON-LD, as after a redesign, so every item page
	// becomes unusable; listing pages do not change, nor does Truth.
	DriftAfter int64
	// ServerSide (Rendered) renders the shop on the server: every page
	// holds the markup its script would build, and no script is served.
	ServerSide bool
	// ThirdParty (Rendered), when set, is the URL of a script on another
	// host that every page asks for, as analytics and tag managers are.
	ThirdParty string
}

// Product is one item a correct crawl exports.
type Product struct {
	// Key is the item's key (_key): its key field's value as text.
	Key string
	// URL is the item's absolute URL (_url).
	URL string
	// Values holds one value per column (see Columns): string, int64,
	// float64, bool, time.Time (UTC), []string for a multiple field, or
	// nil for NULL.
	Values map[string]any
}

// Column is one field of a shop's config, in declared order.
type Column struct {
	// Name is the field's name in [item.fields].
	Name string
	// Type is string, int64, float64, bool or timestamp.
	Type string
	// Multiple marks a list column.
	Multiple bool
}

// catalog is what each kind implements.
type catalog interface {
	// serve answers a request other than /robots.txt; n is its ordinal.
	serve(w http.ResponseWriter, r *http.Request, n int64)
	// robots returns the body of /robots.txt for a request to host.
	robots(r *http.Request) string
	// truth returns the exported rows, URLs under base.
	truth(base string) []Product
	// config returns the config for the shop at base.
	config(base string) string
	// columns returns the config's fields in declared order.
	columns() []Column
}

// Shop is one in-memory shop. Create it with New.
type Shop struct {
	kind  Kind
	opts  Options
	cat   catalog
	stats stats
}

// New returns a shop of kind with opts' defaults filled in. It fails on an
// unknown kind or an invalid option.
func New(kind Kind, opts Options) (*Shop, error) {
	if opts.Products < 0 || opts.PerPage < 0 {
		return nil, fmt.Errorf("shopsites: negative Products or PerPage")
	}
	s := &Shop{kind: kind, opts: opts}
	switch kind {
	case JSONLD:
		s.cat = newJSONLD(&s.opts)
	case Microdata:
		s.cat = newMicrodata(&s.opts)
	case Sitemaps:
		s.cat = newSitemaps(&s.opts)
	case Params:
		s.cat = newParams(&s.opts)
	case JSONAPI:
		if s.opts.API == "" {
			s.opts.API = APIFull
		}
		if s.opts.API != APIFull && s.opts.API != APILinks && s.opts.API != APIGrid {
			return nil, fmt.Errorf("shopsites: unknown API variant %q", s.opts.API)
		}
		s.cat = newJSONAPI(&s.opts)
	case Messy:
		s.cat = newMessy(&s.opts)
	case Gated:
		if strings.ContainsAny(s.opts.Token, " \t\r\n") {
			return nil, fmt.Errorf("shopsites: token holds white space")
		}
		s.cat = newGated(&s.opts)
	case Variants:
		s.cat = newVariants(&s.opts)
	case Shopify:
		s.cat = newShopify(&s.opts)
	case WooCommerce:
		if s.opts.API == "" {
			s.opts.API = WooStore
		}
		if s.opts.API != WooStore && s.opts.API != WooCore {
			return nil, fmt.Errorf("shopsites: unknown WooCommerce API %q", s.opts.API)
		}
		s.cat = newWoo(&s.opts)
	case Offset:
		if s.opts.API == "" {
			s.opts.API = OffsetPages
		}
		if s.opts.API != OffsetPages && s.opts.API != OffsetCursor {
			return nil, fmt.Errorf("shopsites: unknown offset API %q", s.opts.API)
		}
		s.cat = newOffset(&s.opts)
	case GraphQL:
		if s.opts.Token == "" || strings.ContainsAny(s.opts.Token, " \t\r\n") {
			return nil, fmt.Errorf("shopsites: the GraphQL shop needs a token without white space")
		}
		s.cat = newGraphQL(&s.opts)
	case NextJS:
		s.cat = newNextJS(&s.opts)
	case Vue:
		s.cat = newVue(&s.opts)
	case OsCommerce:
		if s.opts.SessionParam == "" {
			s.opts.SessionParam = "osCsid"
		}
		if !validParamName(s.opts.SessionParam) {
			return nil, fmt.Errorf("shopsites: session parameter %q is no plain name", s.opts.SessionParam)
		}
		s.cat = newOsCommerce(&s.opts)
	case Swiss:
		s.cat = newSwiss(&s.opts)
	case Rendered:
		s.cat = newRendered(&s.opts)
	default:
		return nil, fmt.Errorf("shopsites: unknown kind %q", kind)
	}
	return s, nil
}

// Kind returns the shop's kind.
func (s *Shop) Kind() Kind { return s.kind }

// Options returns the options the shop runs with, defaults filled in.
func (s *Shop) Options() Options { return s.opts }

// Truth returns what a correct crawl of the shop served at baseURL (e.g.
// an httptest.Server's URL) with Config(baseURL) must export: one Product
// per item, in catalog order, keys unique.
func (s *Shop) Truth(baseURL string) []Product {
	return s.cat.truth(strings.TrimSuffix(baseURL, "/"))
}

// Config returns a complete databrew-stage config (TOML, SPEC section 6b
// syntax) for the shop served at baseURL: name, start URLs, storage =
// "state" and output = "out" (relative to the config file), the listing,
// item and field tables, [request] where the shop needs it, and last a
// [policy] table with fast test settings (concurrency, timeout, backoff,
// max_backoff, retry_pass_delay, pause), so a test may append further
// policy keys to the returned text. The Gated shop's token config reads
// the token from the environment variable TokenEnv, which the crawl's
// environment must set to Options.Token.
func (s *Shop) Config(baseURL string) string {
	return s.cat.config(strings.TrimSuffix(baseURL, "/"))
}

// PlainConfig returns, for the Rendered shop, the config of a user
// without a browser: Config without [render], with the sitemap's item
// pages besides the listing's links; ok is false for the other kinds,
// whose Config needs no browser.
func (s *Shop) PlainConfig(baseURL string) (config string, ok bool) {
	r, ok := s.cat.(*renderedShop)
	if !ok {
		return "", false
	}
	return r.plainConfig(strings.TrimSuffix(baseURL, "/")), true
}

// Columns returns the fields of Config in declared order.
func (s *Shop) Columns() []Column { return s.cat.columns() }

// ServeHTTP answers a request to the shop.
func (s *Shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		s.stats.robots.Add(1)
		writeText(w, r, http.StatusOK, "text/plain; charset=utf-8", s.cat.robots(r))
		return
	}
	n := s.stats.requests.Add(1)
	s.stats.countPath(r.URL.Path)
	if p, ok := s.cat.(poster); ok && r.Method == http.MethodPost {
		p.servePost(w, r, n)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, r, http.StatusMethodNotAllowed)
		return
	}
	s.cat.serve(w, r, n)
}

// defaultRobots is the robots.txt of every shop but Sitemaps.
const defaultRobots = "User-agent: *\nDisallow: /checkout/\n"
