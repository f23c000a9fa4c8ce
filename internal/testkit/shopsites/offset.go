package shopsites

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The Offset shop is a headless commerce API behind a "load more" button,
// shaped like commercetools' product projection search. It serves
//
//   - /api/product-projections/search?limit=L&offset=N: {"limit", "offset",
//     "count", "total", "results": [...]}, results an empty array past the
//     end; limit defaults to 20 and is at most 500, a bad limit or offset
//     answers 400;
//   - /api/products?limit=L&cursor=C: the same products as {"limit",
//     "count", "results", "nextCursor"}, the cursor opaque (the first page
//     without one) and nextCursor null on the last page; an unknown cursor
//     answers 400.
//
// A product holds id (a UUID), key, version, name and slug as localized
// objects ({"de-DE": ..., "en-GB": ...}), categories, masterVariant {sku,
// prices [{value: {centAmount, currencyCode, fractionDigits}, discounted?}],
// images [{url}], attributes [{name, value}], availability {isOnStock,
// availableQuantity}} and lastModifiedAt. No product has a page: the
// items are the API's cards, and their URL the page they came from.
// Options.API chooses the config: offsets with pages and a step
// (OffsetPages) or the cursor with next_page (OffsetCursor).
//
// Quirks: the name has no "de-DE" on n%9 == 2, only "en-GB"; a discounted
// price on n%4 == 3; the colour attribute is missing on n%5 == 0; no
// availability at all on n%7 == 3; no image on n%8 == 1; weights are
// JSON numbers.
//
// Default 35 products, 12 per page; at least 1.
type offsetShop struct {
	opts     *Options
	products []offsetProduct
}

type offsetProduct struct {
	n          int
	key        string
	nameDE     string // "": none
	nameEN     string
	price      int64 // cents
	discounted int64 // cents; 0: none
	colour     string
	weight     float64
	stock      int // -1: no availability
	image      bool
	modified   time.Time
}

var colourLabels = []string{"Rot", "Salbeigrün", "Sand", "Anthrazit", "Weiß"}

const (
	offsetSearchPath = "/api/product-projections/search"
	offsetCursorPath = "/api/products"
)

func newOffset(opts *Options) *offsetShop {
	opts.Products = defaultProducts(opts.Products, 35, 1)
	if opts.PerPage == 0 {
		opts.PerPage = 12
	}
	s := &offsetShop{opts: opts}
	for n := 1; n <= opts.Products; n++ {
		r := newRNG(n, 0x6f6666736574)
		name := productName(n, r)
		p := offsetProduct{n: n, key: lower(code("CT", n)), nameDE: name, nameEN: name, price: cents(r, 1, 700),
			colour: pick(r, colourLabels), weight: float64(r.between(1, 80)) / 4, stock: r.between(0, 90), image: n%8 != 1,
			modified: time.Date(2025, time.February, 3, 12, 0, 0, 0, time.UTC).Add(time.Duration(n)*17*time.Hour + time.Duration(n)*time.Millisecond)}
		if n%9 == 2 {
			p.nameDE = ""
		}
		if n%4 == 3 {
			p.discounted = p.price * 3 / 4
		}
		if n%5 == 0 {
			p.colour = ""
		}
		if n%7 == 3 {
			p.stock = -1
		}
		s.products = append(s.products, p)
	}
	return s
}

func (s *offsetShop) robots(*http.Request) string { return defaultRobots }

// object returns p as the API writes it.
func (s *offsetShop) object(p *offsetProduct) map[string]any {
	name := map[string]any{"en-GB": p.nameEN}
	slugs := map[string]any{"en-GB": slug(p.nameEN, p.n)}
	if p.nameDE != "" {
		name["de-DE"] = p.nameDE
		slugs["de-DE"] = slugs["en-GB"]
	}
	centPrecision := func(c int64) map[string]any {
		return map[string]any{"type": "centPrecision", "currencyCode": "EUR", "centAmount": c, "fractionDigits": 2}
	}
	price := map[string]any{"id": fmt.Sprintf("pr-%04d", p.n), "value": centPrecision(p.price), "country": "DE"}
	if p.discounted > 0 {
		price["discounted"] = map[string]any{"value": centPrecision(p.discounted), "discount": map[string]any{"typeId": "product-discount", "id": "spring"}}
	}
	attrs := []any{map[string]any{"name": "weight", "value": p.weight}}
	if p.colour != "" {
		attrs = append([]any{map[string]any{"name": "color", "value": map[string]any{"key": lower(p.colour),
			"label": map[string]any{"de-DE": p.colour}}}}, attrs...)
	}
	images := []any{}
	if p.image {
		images = append(images, map[string]any{"url": "https://images.shop.example/" + p.key + "-main.webp",
			"dimensions": map[string]any{"w": 1600, "h": 1600}})
	}
	variant := map[string]any{"id": 1, "sku": strings.ToUpper(p.key), "key": p.key, "prices": []any{price},
		"images": images, "attributes": attrs, "assets": []any{}}
	if p.stock >= 0 {
		variant["availability"] = map[string]any{"isOnStock": p.stock > 0, "availableQuantity": p.stock}
	}
	return map[string]any{"id": offsetUUID(p.n), "version": 3 + p.n%4, "key": p.key, "productType": map[string]any{"typeId": "product-type", "id": "home"},
		"name": name, "slug": slugs, "categories": []any{map[string]any{"typeId": "category", "id": "living"}},
		"masterVariant": variant, "variants": []any{}, "searchKeywords": map[string]any{}, "hasStagedChanges": false,
		"published": true, "createdAt": "2024-11-05T10:00:00.000Z", "lastModifiedAt": p.modified.Format("2006-01-02T15:04:05.000Z07:00")}
}

// offsetUUID returns a UUID for product n.
func offsetUUID(n int) string {
	h := fmt.Sprintf("%016x%016x", mix(uint64(n)), mix(uint64(n)+1))
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32]
}

// cursor returns the cursor of the page after product index i (0-based).
func offsetCursor(i int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(`{"after":` + strconv.Itoa(i) + `}`))
}

func (s *offsetShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	path := r.URL.Path
	if path != offsetSearchPath && path != offsetCursorPath {
		writeText(w, r, http.StatusNotFound, ctJSON, `{"statusCode":404,"message":"Not found"}`)
		return
	}
	q := r.URL.Query()
	limit, ok := 20, true
	if q.Has("limit") {
		limit, ok = pageNumber(r, "limit")
	}
	from := 0
	if path == offsetSearchPath {
		var err error
		if q.Has("offset") {
			from, err = strconv.Atoi(q.Get("offset"))
			ok = ok && err == nil && from >= 0 && strconv.Itoa(from) == q.Get("offset")
		}
	} else if c := q.Get("cursor"); c != "" {
		found := false
		for i := range s.products {
			if offsetCursor(i) == c {
				from, found = i, true
			}
		}
		ok = ok && found
	}
	if !ok || limit > 500 {
		writeText(w, r, http.StatusBadRequest, ctJSON, `{"statusCode":400,"message":"Malformed parameter: limit, offset or cursor."}`)
		return
	}
	results := []any{}
	for i := from; i < min(from+limit, len(s.products)); i++ {
		results = append(results, s.object(&s.products[i]))
	}
	doc := map[string]any{"limit": limit, "count": len(results), "results": results}
	if path == offsetSearchPath {
		doc["offset"], doc["total"] = from, len(s.products)
	} else {
		doc["nextCursor"] = nil
		if end := from + limit; end < len(s.products) {
			doc["nextCursor"] = offsetCursor(end)
		}
	}
	writeText(w, r, http.StatusOK, ctJSON, encodeJSON(doc, false, false))
}

// pageURL returns the URL of the listing page that holds product index i.
func (s *offsetShop) pageURL(base string, i int) string {
	per := s.opts.PerPage
	first := i / per * per
	if s.opts.API == OffsetCursor {
		u := base + offsetCursorPath + "?limit=" + strconv.Itoa(per)
		if first > 0 {
			u += "&cursor=" + offsetCursor(first)
		}
		return u
	}
	return base + offsetSearchPath + "?limit=" + strconv.Itoa(per) + "&offset=" + strconv.Itoa(first)
}

func (s *offsetShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		v := map[string]any{"key": p.key, "name": p.nameEN, "sku": strings.ToUpper(p.key), "price": money(p.price),
			"regular_price": money(p.price), "colour": nil, "weight": p.weight, "in_stock": nil, "quantity": nil,
			"image": nil, "modified": p.modified}
		if p.nameDE != "" {
			v["name"] = p.nameDE
		}
		if p.discounted > 0 {
			v["price"] = money(p.discounted)
		}
		if p.colour != "" {
			v["colour"] = p.colour
		}
		if p.stock >= 0 {
			v["in_stock"], v["quantity"] = p.stock > 0, int64(p.stock)
		}
		if p.image {
			v["image"] = "https://images.shop.example/" + p.key + "-main.webp"
		}
		out = append(out, Product{Key: p.key, URL: s.pageURL(base, i), Values: v})
	}
	return out
}

func (s *offsetShop) columns() []Column {
	return []Column{{Name: "key", Type: "string"}, {Name: "name", Type: "string"}, {Name: "sku", Type: "string"},
		{Name: "price", Type: "float64"}, {Name: "regular_price", Type: "float64"}, {Name: "colour", Type: "string"},
		{Name: "weight", Type: "float64"}, {Name: "in_stock", Type: "bool"}, {Name: "quantity", Type: "int64"},
		{Name: "image", Type: "string"}, {Name: "modified", Type: "timestamp"}}
}

// offsetFields are the fields of both configs: the cards are the same.
const offsetFields = `
[item]
key = "key"

[item.fields]
key           = { json = "key", required = true }
name          = { json = "name.\"de-DE\" || name.\"en-GB\"", required = true }
sku           = { json = "masterVariant.sku" }
price         = { json = "(masterVariant.prices[0].discounted.value || masterVariant.prices[0].value).centAmount / ` + "`100`" + `", type = "float64", required = true }
regular_price = { json = "masterVariant.prices[0].value.centAmount / ` + "`100`" + `", type = "float64" }
colour        = { json = "masterVariant.attributes[?name == 'color'].value.label.\"de-DE\" | [0]" }
weight        = { json = "masterVariant.attributes[?name == 'weight'].value | [0]", type = "float64" }
in_stock      = { json = "masterVariant.availability.isOnStock", type = "bool" }
quantity      = { json = "masterVariant.availability.availableQuantity", type = "int64" }
image         = { json = "masterVariant.images[0].url" }
modified      = { json = "lastModifiedAt", type = "timestamp" }
`

func (s *offsetShop) config(base string) string {
	per := strconv.Itoa(s.opts.PerPage)
	if s.opts.API == OffsetCursor {
		return render(base, configHead("shop-offset", "{base}"+offsetCursorPath+"?limit="+per), `
[listing]
format    = "json"
items     = "results"
next_page = { json = "nextCursor", param = "cursor" }
`+offsetFields)
	}
	return render(base, configHead("shop-offset", "{base}"+offsetSearchPath+"?limit="+per), `
[listing]
format = "json"
items  = "results"
pages  = { param = "offset", start = 0, step = `+per+` }
`+offsetFields)
}
