package shopsites

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// graphqlPath is the GraphQL shop's endpoint.
const graphqlPath = "/api/2025-01/graphql.json"

// The GraphQL shop is a storefront API shaped like Shopify's Storefront
// API at /api/2025-01/graphql.json. It answers only POST (GET answers 405
// with an Allow header) with a JSON body {"query": ..., "variables":
// {"first": N, "after": cursor or null}}, and only with the header
// X-Shopify-Storefront-Access-Token: Options.Token (else 401). A query
// that does not ask for products(...), or variables without a first of
// 1 to 250, gets a 200 with {"errors": [...]} and no data, as GraphQL
// servers answer; an unknown cursor too. Otherwise the answer is
// {"data": {"products": {"edges": [{"cursor", "node"}], "pageInfo":
// {"hasNextPage", "endCursor", ...}}}}, every node with every field
// whatever the query selects: id ("gid://shopify/Product/<n>"), handle,
// title, vendor, productType, tags, availableForSale, totalInventory,
// onlineStoreUrl, updatedAt, priceRange {minVariantPrice,
// maxVariantPrice} {amount, currencyCode} and featuredImage {url}.
// Amounts are decimal strings as the Storefront API writes them: "19.99",
// and "20.0" for a round price. The config reads the token from
// ${SHOP_TOKEN} (TokenEnv). The online store serves /products/<handle>
// for the products published to it; the config never needs them.
//
// Quirks: onlineStoreUrl is null on n%11 == 5 (a product not published
// to the online store), so its item's URL is the endpoint's; every
// eighth product has no featuredImage (n%8 == 6); totalInventory is null
// on n%9 == 7; productType is "" on n%6 == 1; every fourth price is
// round (n%4 == 2), and every fifth product has a price range (n%5 == 0).
//
// Default 36 products, 12 per page (the config's variables.first); at
// least 1.
type graphqlShop struct {
	opts     *Options
	products []graphqlProduct
}

type graphqlProduct struct {
	n           int
	handle      string
	title       string
	vendor      string
	productType string
	price, high int64 // cents
	available   bool
	inventory   int // -1: null
	url, image  bool
	tags        []string
	updated     time.Time
}

func newGraphQL(opts *Options) *graphqlShop {
	opts.Products = defaultProducts(opts.Products, 36, 1)
	if opts.PerPage == 0 {
		opts.PerPage = 12
	}
	s := &graphqlShop{opts: opts}
	for n := 1; n <= opts.Products; n++ {
		r := newRNG(n, 0x6772617068716c)
		title := productName(n, r)
		p := graphqlProduct{n: n, handle: slug(title, n), title: title,
			vendor: pick(r, brands), productType: pick(r, []string{"Home", "Kitchen", "Decor"}), price: cents(r, 4, 1400),
			inventory: r.between(0, 80), url: n%11 != 5, image: n%8 != 6, tags: pickTags(r, 2),
			updated: time.Date(2025, time.April, 2, 6, 15, 0, 0, time.UTC).Add(time.Duration(n) * 41 * time.Hour)}
		if n%4 == 2 {
			p.price = p.price / 100 * 100
		}
		p.high = p.price
		if n%5 == 0 {
			p.high = p.price + 2550
		}
		p.available = p.inventory > 0
		if n%9 == 7 {
			p.inventory, p.available = -1, true
		}
		if n%6 == 1 {
			p.productType = ""
		}
		s.products = append(s.products, p)
	}
	return s
}

func (s *graphqlShop) robots(*http.Request) string { return defaultRobots }

// graphqlMoney writes cents as the Storefront API's Decimal: "19.99",
// "20.0".
func graphqlMoney(c int64) string {
	f := strconv.FormatFloat(money(c), 'f', -1, 64)
	if !strings.Contains(f, ".") {
		f += ".0"
	}
	return f
}

// graphqlCursor returns the cursor of the edge of product index i.
func graphqlCursor(p *graphqlProduct) string {
	id := strconv.Itoa(8_001_234_567_000 + p.n)
	return base64.StdEncoding.EncodeToString([]byte(`{"last_id":` + id + `,"last_value":"` + id + `"}`))
}

// node returns p as the API writes it, links under o.
func (s *graphqlShop) node(o string, p *graphqlProduct) map[string]any {
	amount := func(c int64) map[string]any { return map[string]any{"amount": graphqlMoney(c), "currencyCode": "EUR"} }
	var inventory, url, image any
	if p.inventory >= 0 {
		inventory = p.inventory
	}
	if p.url {
		url = o + "/products/" + p.handle
	}
	if p.image {
		image = map[string]any{"url": s.imageURL(p), "altText": nil}
	}
	return map[string]any{"id": "gid://shopify/Product/" + strconv.Itoa(8_001_234_567_000+p.n), "handle": p.handle,
		"title": p.title, "vendor": p.vendor, "productType": p.productType, "tags": p.tags, "availableForSale": p.available,
		"totalInventory": inventory, "onlineStoreUrl": url, "updatedAt": p.updated.Format(time.RFC3339),
		"priceRange": map[string]any{"minVariantPrice": amount(p.price), "maxVariantPrice": amount(p.high)}, "featuredImage": image}
}

func (s *graphqlShop) imageURL(p *graphqlProduct) string {
	return "https://cdn.shop.example/s/files/1/0702/files/" + p.handle + ".jpg?v=1712000000"
}

func (s *graphqlShop) serve(w http.ResponseWriter, r *http.Request, _ int64) {
	if r.URL.Path != graphqlPath {
		for i := range s.products {
			if p := &s.products[i]; p.url && r.URL.Path == "/products/"+p.handle {
				writeHTML(w, r, http.StatusOK, page(p.title, "", "<div class=\"product\"><h1>"+esc(p.title)+
					"</h1><p class=\"price\">€"+graphqlMoney(p.price)+"</p></div>\n"))
				return
			}
		}
		writeError(w, r, http.StatusNotFound)
		return
	}
	w.Header().Set("Allow", "POST")
	writeText(w, r, http.StatusMethodNotAllowed, ctJSON, `{"errors":[{"message":"GraphQL queries must be sent with POST"}]}`)
}

// graphqlError answers a GraphQL error: HTTP 200 and no data.
func graphqlError(w http.ResponseWriter, r *http.Request, msg string) {
	writeText(w, r, http.StatusOK, ctJSON, encodeJSON(map[string]any{"errors": []any{map[string]any{"message": msg}}}, false, false))
}

func (s *graphqlShop) servePost(w http.ResponseWriter, r *http.Request, _ int64) {
	if r.URL.Path != graphqlPath {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, r, http.StatusMethodNotAllowed)
		return
	}
	token := r.Header.Get("X-Shopify-Storefront-Access-Token")
	if subtle.ConstantTimeCompare([]byte(token), []byte(s.opts.Token)) != 1 {
		writeText(w, r, http.StatusUnauthorized, ctJSON, `{"errors":[{"message":"Invalid Storefront access token","extensions":{"code":"UNAUTHORIZED"}}]}`)
		return
	}
	var req struct {
		Query     string `json:"query"`
		Variables struct {
			First *int    `json:"first"`
			After *string `json:"after"`
		} `json:"variables"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || json.Unmarshal(body, &req) != nil {
		graphqlError(w, r, "Parse error: the body is no JSON object with a query")
		return
	}
	if !strings.Contains(req.Query, "products(") {
		graphqlError(w, r, "this storefront answers products queries only")
		return
	}
	first := req.Variables.First
	if first == nil || *first < 1 || *first > 250 {
		graphqlError(w, r, "you must provide first (1 to 250)")
		return
	}
	from := 0
	if after := req.Variables.After; after != nil {
		from = -1
		for i := range s.products {
			if graphqlCursor(&s.products[i]) == *after {
				from = i + 1
			}
		}
		if from < 0 {
			graphqlError(w, r, "Invalid cursor for current pagination sort.")
			return
		}
	}
	o := origin(r)
	edges := []any{}
	end := min(from+*first, len(s.products))
	for i := from; i < end; i++ {
		p := &s.products[i]
		edges = append(edges, map[string]any{"cursor": graphqlCursor(p), "node": s.node(o, p)})
	}
	var endCursor, startCursor any
	if end > from {
		endCursor, startCursor = graphqlCursor(&s.products[end-1]), graphqlCursor(&s.products[from])
	}
	info := map[string]any{"hasNextPage": end < len(s.products), "hasPreviousPage": from > 0, "endCursor": endCursor, "startCursor": startCursor}
	writeText(w, r, http.StatusOK, ctJSON, encodeJSON(map[string]any{"data": map[string]any{"products": map[string]any{
		"edges": edges, "pageInfo": info}}}, false, false))
}

func (s *graphqlShop) truth(base string) []Product {
	out := make([]Product, 0, len(s.products))
	for i := range s.products {
		p := &s.products[i]
		id := "gid://shopify/Product/" + strconv.Itoa(8_001_234_567_000+p.n)
		v := map[string]any{"id": id, "handle": p.handle, "title": p.title, "vendor": p.vendor, "product_type": nil,
			"price": money(p.price), "max_price": money(p.high), "currency": "EUR", "available": p.available,
			"inventory": nil, "image": nil, "tags": nil, "url": nil, "updated_at": p.updated}
		if p.productType != "" {
			v["product_type"] = p.productType
		}
		if p.inventory >= 0 {
			v["inventory"] = int64(p.inventory)
		}
		if p.image {
			v["image"] = s.imageURL(p)
		}
		if len(p.tags) > 0 {
			v["tags"] = append([]string(nil), p.tags...)
		}
		url := base + graphqlPath
		if p.url {
			url = base + "/products/" + p.handle
			v["url"] = url
		}
		out = append(out, Product{Key: id, URL: url, Values: v})
	}
	return out
}

func (s *graphqlShop) columns() []Column {
	return []Column{{Name: "id", Type: "string"}, {Name: "handle", Type: "string"}, {Name: "title", Type: "string"},
		{Name: "vendor", Type: "string"}, {Name: "product_type", Type: "string"}, {Name: "price", Type: "float64"},
		{Name: "max_price", Type: "float64"}, {Name: "currency", Type: "string"}, {Name: "available", Type: "bool"},
		{Name: "inventory", Type: "int64"}, {Name: "image", Type: "string"}, {Name: "tags", Type: "string", Multiple: true},
		{Name: "url", Type: "string"}, {Name: "updated_at", Type: "timestamp"}}
}

func (s *graphqlShop) config(base string) string {
	return render(base, configHead("shop-graphql", "{base}"+graphqlPath), `
[listing]
format    = "json"
items     = "data.products.edges[].node"
next_page = { json = "data.products.pageInfo.hasNextPage && data.products.pageInfo.endCursor", body = "variables.after" }

[listing.request]
method  = "POST"
headers = { "X-Shopify-Storefront-Access-Token" = "${`+TokenEnv+`}" }
body    = '''{"query": "query Products($first: Int!, $after: String) { products(first: $first, after: $after) { edges { node { id handle title vendor productType tags availableForSale totalInventory onlineStoreUrl updatedAt priceRange { minVariantPrice { amount currencyCode } maxVariantPrice { amount } } featuredImage { url } } } pageInfo { hasNextPage endCursor } } }",
             "variables": {"first": `+strconv.Itoa(s.opts.PerPage)+`, "after": null}}'''

[item]
key = "id"

[item.fields]
id           = { json = "id", required = true }
handle       = { json = "handle" }
title        = { json = "title", required = true }
vendor       = { json = "vendor" }
product_type = { json = "productType" }
price        = { json = "priceRange.minVariantPrice.amount", type = "float64", required = true }
max_price    = { json = "priceRange.maxVariantPrice.amount", type = "float64" }
currency     = { json = "priceRange.minVariantPrice.currencyCode" }
available    = { json = "availableForSale", type = "bool" }
inventory    = { json = "totalInventory", type = "int64" }
image        = { json = "featuredImage.url" }
tags         = { json = "tags", multiple = true }
url          = { json = "onlineStoreUrl", url = true }
updated_at   = { json = "updatedAt", type = "timestamp" }
`)
}
