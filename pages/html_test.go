package pages

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/extract/htmltree"
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

// TestHTMLItemsStayTheirPagesWhenTreesAreReused reads two item pages of
// plain markup over and over from several goroutines: each page's tree is
// built from the nodes of pages read before it (extract.ParseTransient),
// and every read must yield what the page's first read yielded.
func TestHTMLItemsStayTheirPagesWhenTreesAreReused(t *testing.T) {
	x, err := extract.Compile(extract.Spec{Fields: []extract.FieldSpec{
		{Name: "title", CSS: []string{"h1"}, Required: true},
		{Name: "image", CSS: []string{"img"}, Attr: "src", URL: true},
		{Name: "tags", CSS: []string{"ul.tags li"}, Multiple: true},
		{Name: "sku", JSONLD: "Product", JSON: "sku"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	item, err := NewHTMLItem(x, HTML{})
	if err != nil {
		t.Fatal(err)
	}
	body := func(n int) string {
		var sb strings.Builder
		fmt.Fprintf(&sb, `<!DOCTYPE html><html><head><title>%d</title><script type="application/ld+json">{"@type": "Product", "sku": "sku-%d"}</script></head><body>`, n, n)
		fmt.Fprintf(&sb, `<h1>Book %d</h1><img src="/media/%d.jpg" alt=""><ul class="tags">`, n, n)
		for i := range n * 40 {
			fmt.Fprintf(&sb, `<li>tag %d of %d</li>`, i, n)
		}
		sb.WriteString(`</ul></body></html>`)
		return sb.String()
	}
	pages := []crawl.Page{page(body(1), "text/html"), page(body(2), "text/html")}
	want := make([][]extract.Item, len(pages))
	for i, p := range pages {
		if _, ok := htmltree.ParseTree(p.Body); !ok {
			t.Fatalf("page %d is not plain markup: the test would not reuse trees", i)
		}
		y, err := item.Read(p)
		if err != nil || len(y.Items) != 1 || y.Items[0].Values[3] != fmt.Sprintf("sku-%d", i+1) {
			t.Fatalf("page %d: %+v, %v", i, y, err)
		}
		want[i] = y.Items
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for n := range 300 {
				i := (g + n) % len(pages)
				y, err := item.Read(pages[i])
				if err != nil || !reflect.DeepEqual(y.Items, want[i]) {
					t.Errorf("read %d of page %d: %+v, %v; want %+v", n, i, y.Items, err, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}
