package shopsites

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func TestVariantsRowsHoldTheTruth(t *testing.T) {
	shop, srv := newServer(t, Variants, Options{})
	c := srv.Client()
	truth := shop.Truth(srv.URL)
	links, pages := walkListing(t, c, srv.URL+"/collections/outerwear", "div.collection a.product-tile", "a.next-page", "href")
	if want := truthURLs(truth); !slices.Equal(links, want) {
		t.Errorf("listing links %v,\nwant %v", links, want)
	}
	if pages != 3 {
		t.Errorf("%d listing pages, want 3", pages)
	}
	byURL := map[string][]Product{}
	for _, p := range truth {
		byURL[p.URL] = append(byURL[p.URL], p)
	}
	seen := map[string]bool{}
	for _, u := range links {
		doc := parse(t, getOK(t, c, u).body)
		rows := doc.Find("table.variants tr.variant")
		want := byURL[u]
		if rows.Length() != len(want) {
			t.Fatalf("%s: %d rows, truth %d", u, rows.Length(), len(want))
		}
		if doc.Find("table.variants tr").Length() != len(want)+2 || doc.Find("tr.variant-note").Length() != 1 {
			t.Errorf("%s: want a header row and a note row around the variants", u)
		}
		seen[strconv.Itoa(len(want))+" rows"] = true
		name := doc.Find("h1 .name").Text()
		var brand any
		if b := doc.Find("h1 .brand"); b.Length() > 0 {
			brand = b.Text()
		} else {
			seen["no brand"] = true
		}
		productID := doc.Find("[data-product-id]").AttrOr("data-product-id", "")
		rows.Each(func(i int, row *goquery.Selection) {
			p := want[i]
			v := p.Values
			cell := func(sel string) string { return strings.TrimSpace(row.Find(sel).Text()) }
			var size, stock any
			if s := cell("td.v-size"); s != "" {
				size = s
			} else {
				seen["empty size"] = true
			}
			switch s := cell("td.v-stock"); s {
			case "":
				seen["empty stock"] = true
			case "Sold out":
				stock = int64(0)
				seen["sold out"] = true
			default:
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					t.Errorf("%s: stock %q", p.Key, s)
				}
				stock = n
			}
			if cell("td.v-colour") == "" {
				seen["empty colour"] = true
			}
			price, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimPrefix(cell("td.v-price"), "$"), ",", ""), 64)
			got := []any{row.AttrOr("data-sku", ""), name, brand, productID, cell("td.v-colour"), size, stock, price}
			wantRow := []any{p.Key, v["product"], v["brand"], v["product_id"], v["colour"], v["size"], v["stock"], v["price"]}
			if err != nil || !slices.Equal(got, wantRow) {
				t.Errorf("%s: row %v, truth %v", p.Key, got, wantRow)
			}
		})
	}
	for _, want := range []string{"1 rows", "4 rows", "no brand", "empty size", "empty stock", "sold out", "empty colour"} {
		if !seen[want] {
			t.Errorf("no product page has %s", want)
		}
	}
}
