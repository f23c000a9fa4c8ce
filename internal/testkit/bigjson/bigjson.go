// Package bigjson writes large JSON listing pages as real catalog APIs
// send them, for the tests and benchmarks of what reading one costs: a
// page of product objects, each with nested offers, variants and images,
// under data.products, with a next page and a cursor beside it.
package bigjson

import (
	"fmt"
	"strconv"
	"strings"
)

// ProductBytes is about what one product object of Listing takes.
const ProductBytes = 500

// Listing returns a listing page of n products, ids first to first+n-1:
//
//	{"data": {"products": [...], "pageInfo": {"hasNextPage": true, "endCursor": "c-<last id>"}},
//	 "next": "\/api\/products?page=2", "total": n}
//
// A product is
//
//	{"id": 1, "sku": "SKU-000001", "title": "Caf\u00e9 Mug 1", "url": "\/products\/1",
//	 "price": 12.90, "available": true, "tags": ["mug", "kitchen"],
//	 "offers": {"price": "12.90", "priceCurrency": "EUR"},
//	 "variants": [{"id": 100001, "sku": "SKU-000001-S", "price": 12.90, "stock": 3}, ...],
//	 "images": [{"src": "https:\/\/cdn.shop.example\/i\/1-0.jpg", "w": 800}, ...]}
//
// with strings escaped as PHP's json_encode writes them (\/ and \u00e9).
// Every third product is unavailable and has a third variant; every fifth
// has no images.
func Listing(first, n int) []byte {
	var b strings.Builder
	b.Grow(n*ProductBytes + 256)
	b.WriteString(`{"data": {"products": [`)
	for id := first; id < first+n; id++ {
		if id > first {
			b.WriteString(",\n")
		}
		writeProduct(&b, id)
	}
	fmt.Fprintf(&b, `], "pageInfo": {"hasNextPage": true, "endCursor": "c-%d"}}, "next": "\/api\/products?page=2", "total": %d}`, first+n-1, n)
	return []byte(b.String())
}

// Price is the price of product id in cents, as Listing writes it.
func Price(id int) int { return 100 + id*37%9000 }

// SKU is the SKU of product id.
func SKU(id int) string { return fmt.Sprintf("SKU-%06d", id) }

// Title is the decoded title of product id.
func Title(id int) string { return "Café Mug " + strconv.Itoa(id) }

// Variants is the number of variants of product id.
func Variants(id int) int {
	if id%3 == 0 {
		return 3
	}
	return 2
}

// Stock is the total stock of product id's variants.
func Stock(id int) int {
	s := 0
	for v := range Variants(id) {
		s += variantStock(id, v)
	}
	return s
}

func variantStock(id, v int) int { return (id + v*7) % 13 }

func money(cents int) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }

func writeProduct(b *strings.Builder, id int) {
	sku, price := SKU(id), money(Price(id))
	fmt.Fprintf(b, `{"id": %d, "sku": %q, "title": "Caf\u00e9 Mug %d", "url": "\/products\/%d", "price": %s, "available": %t, "tags": ["mug", "kitchen"], `,
		id, sku, id, id, price, id%3 != 0)
	fmt.Fprintf(b, `"offers": {"price": %q, "priceCurrency": "EUR"}, "variants": [`, price)
	for v := range Variants(id) {
		if v > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, `{"id": %d, "sku": "%s-%c", "price": %s, "stock": %d}`, id*100+v, sku, "SML"[v], price, variantStock(id, v))
	}
	b.WriteString(`], "images": [`)
	if id%5 != 0 {
		fmt.Fprintf(b, `{"src": "https:\/\/cdn.shop.example\/i\/%d-0.jpg", "w": 800}, {"src": "https:\/\/cdn.shop.example\/i\/%d-1.jpg", "w": 600}`, id, id)
	}
	b.WriteString(`]}`)
}
