package pages

import (
	"net/url"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/internal/testkit/bigjson"
)

// bigProducts is how many products the 9 MB listing page holds.
const bigProducts = 18000

// bigCardSpec reads the cards of a bigjson listing page.
func bigCardSpec() extract.Spec {
	return extract.Spec{
		Listing: extract.ListingSpec{Format: extract.FormatJSON, Items: "data.products", NextPage: "next"},
		Key:     "sku",
		Fields: []extract.FieldSpec{
			{Name: "id", JSON: "id", Type: extract.TypeInt64},
			{Name: "sku", JSON: "sku", Required: true},
			{Name: "title", JSON: "title", Required: true},
			{Name: "link", JSON: "url", URL: true},
			{Name: "price", JSON: "price", Type: extract.TypeFloat64},
			{Name: "available", JSON: "available", Type: extract.TypeBool},
			{Name: "variant_skus", JSON: "variants[].sku", Multiple: true},
			{Name: "image", JSON: "images[0].src", URL: true},
			{Name: "stock", JSON: "sum(variants[].stock)", Type: extract.TypeInt64},
		},
	}
}

// bigLinkSpec reads the item links of a bigjson listing page.
func bigLinkSpec() extract.Spec {
	return extract.Spec{
		Listing: extract.ListingSpec{Format: extract.FormatJSON, ItemLinks: "data.products[].url", NextPage: "next", MaxLinks: bigProducts},
		Item:    extract.ItemSpec{Format: extract.FormatJSON},
		Fields:  []extract.FieldSpec{{Name: "title", JSON: "title"}},
	}
}

// BenchmarkJSONListing9MB reads a 9 MB JSON listing page of 18,000
// products with nested offers, variants and images, as cards and as item
// links.
func BenchmarkJSONListing9MB(b *testing.B) {
	body := bigjson.Listing(1, bigProducts)
	u, _ := url.Parse("https://shop.example/api/products?page=1")
	p := crawl.Page{URL: u, Status: 200, ContentType: "application/json", Body: body}
	for _, bb := range []struct {
		name string
		spec extract.Spec
	}{{"cards", bigCardSpec()}, {"links", bigLinkSpec()}} {
		b.Run(bb.name, func(b *testing.B) {
			x, err := extract.Compile(bb.spec)
			if err != nil {
				b.Fatal(err)
			}
			r := NewJSONListing(x)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				y, err := r.Read(p)
				if err != nil || len(y.Items)+len(y.Links) < bigProducts {
					b.Fatalf("%d items, %d links, %v", len(y.Items), len(y.Links), err)
				}
			}
		})
	}
}
