package pages

import (
	"net/url"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
)

func TestIsHTML(t *testing.T) {
	for ct, want := range map[string]bool{
		"":                            true,
		"text/html":                   true,
		"Text/HTML; charset=utf-8":    true,
		"application/xhtml+xml;q=0.9": true,
		" APPLICATION/XHTML+XML ":     true,
		"text/plain":                  false,
		"application/json":            false,
		"text/htmlx":                  false,
		`image/png; name="text/html"`: false,
	} {
		if got := isHTML(ct); got != want {
			t.Errorf("isHTML(%q) = %v, want %v", ct, got, want)
		}
	}
}

var testSpec = extract.Spec{
	Listing: extract.ListingSpec{ItemLinks: "h3 a", NextPage: "li.next a"},
	Fields:  []extract.FieldSpec{{Name: "title", CSS: []string{"h1"}, Required: true}},
}

func readers(t *testing.T, h HTML) (*HTMLListing, *HTMLItem) {
	t.Helper()
	x, err := extract.Compile(testSpec)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewHTMLListing(x, h)
	if err != nil {
		t.Fatal(err)
	}
	i, err := NewHTMLItem(x, h)
	if err != nil {
		t.Fatal(err)
	}
	return l, i
}

func page(body, contentType string) crawl.Page {
	u, _ := url.Parse("http://shop.example/list/1")
	return crawl.Page{URL: u, Status: 200, ContentType: contentType, Body: []byte(body)}
}

func TestHTMLPagesAreJudgedBeforeTheyAreRead(t *testing.T) {
	pad := strings.Repeat("<p>padding</p>", 40)
	listing, item := readers(t, HTML{MinBodyBytes: 512, Block: []string{"#captcha"}})
	for _, tt := range []struct {
		name, body, contentType string
		failure                 bool
		reason                  string
	}{
		{"a stub shorter than min_body_bytes is a failure", "<html><body>down</body></html>", "text/html", true, "HTTP 200 with a 30-byte body (min_body_bytes 512)"},
		{"another format is unusable", `{"name": "x", "pad": "` + pad + `"}`, "application/json", false, "not an HTML page (application/json)"},
	} {
		for _, r := range []crawl.PageReader{listing, item} {
			_, err := r.Read(page(tt.body, tt.contentType))
			pe, ok := err.(*crawl.PageError)
			if !ok || pe.Failure != tt.failure || pe.Reason != tt.reason {
				t.Errorf("%s: %T %v, want failure %v %q", tt.name, err, err, tt.failure, tt.reason)
			}
		}
	}
	for _, r := range []crawl.PageReader{listing, item} {
		y, err := r.Read(page(`<div id="captcha">prove you are human</div>`+pad, ""))
		if err != nil || y.Blocked != `matches selector "#captcha"` {
			t.Errorf("a [block] selector: %+v, %v", y, err)
		}
	}
}

func TestHTMLListingAndItemYields(t *testing.T) {
	pad := strings.Repeat("<p>padding</p>", 40)
	listing, item := readers(t, HTML{MinBodyBytes: 512})
	y, err := listing.Read(page(`<h3><a href="/item/1">1</a></h3><li class="next"><a href="/list/2">next</a></li>`+pad, "text/html"))
	if err != nil || len(y.Links) != 2 || y.Links[0] != (crawl.Link{URL: "http://shop.example/item/1", Kind: crawl.KindItem}) ||
		y.Links[1] != (crawl.Link{URL: "http://shop.example/list/2", Kind: crawl.KindListing}) {
		t.Fatalf("listing yield = %+v, %v", y, err)
	}
	y, err = item.Read(page(`<h1>Winter Orchard</h1>`+pad, "text/html"))
	if err != nil || len(y.Items) != 1 || y.Items[0].Values[0] != "Winter Orchard" {
		t.Fatalf("item yield = %+v, %v", y, err)
	}
	if y, err := item.Read(page(`<h2>no title</h2>`+pad, "text/html")); err != nil || len(y.Items) != 0 || len(y.Unusable) != 1 ||
		!strings.Contains(y.Unusable[0].Reason, "title") {
		t.Fatalf("an item page without its required field: %+v, %v; want its item unusable", y, err)
	}
}
