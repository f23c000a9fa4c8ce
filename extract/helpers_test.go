package extract

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

const testPage = "https://books.example.com/catalogue/a-light/index.html"

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", s, err)
	}
	return u
}

func mustCompile(t testing.TB, spec Spec) *Extractor {
	t.Helper()
	x, err := Compile(spec)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return x
}

func mustParse(t testing.TB, x *Extractor, page string) *goquery.Document {
	t.Helper()
	doc, err := x.Parse([]byte(page))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return doc
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bookSpec reads the testdata/book.html item page.
func bookSpec() Spec {
	return Spec{
		Listing: ListingSpec{ItemLinks: "article.product_pod h3 a", NextPage: "li.next a"},
		Key:     "upc",
		Fields: []FieldSpec{
			{Name: "title", CSS: []string{"div.product_main h1"}, Required: true},
			{Name: "price", CSS: []string{"p.price_color"}, Type: TypeFloat64, Regex: `[\d.,]+`, Required: true},
			{Name: "stock", CSS: []string{"p.instock.availability"}, Type: TypeInt64, Regex: `\((\d+) available\)`},
			{Name: "upc", CSS: []string{"table tr:nth-child(1) td"}},
			{Name: "tags", CSS: []string{"ul.tags li"}, Multiple: true},
			{Name: "image", CSS: []string{"div.item img"}, Attr: "src", URL: true},
			{Name: "published", CSS: []string{"p.published time"}, Attr: "datetime", Type: TypeTimestamp},
		},
	}
}

// cardSpec reads the item cards of testdata/listing.html.
func cardSpec() Spec {
	return Spec{
		Listing: ListingSpec{ItemLinks: "article.product_pod h3 a", NextPage: "li.next a", Items: "article.product_pod"},
		Fields: []FieldSpec{
			{Name: "title", CSS: []string{"h3 a"}, Required: true},
			{Name: "price", CSS: []string{"p.price_color"}, Type: TypeFloat64, Regex: `[\d.,]+`, Required: true},
			{Name: "rating", CSS: []string{"p.star-rating"}, Attr: "class", Regex: `star-rating (\w+)`},
			{Name: "image", CSS: []string{"img"}, Attr: "src", URL: true},
		},
	}
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UTC()
}
