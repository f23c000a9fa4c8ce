package pages

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/internal/testkit/bigjson"
	"github.com/databrew/databrew-stage/internal/testkit/heappeak"
)

// bigPage is a JSON listing page of body from the API of shop.example.
func bigPage(body []byte) crawl.Page {
	u, _ := url.Parse("https://shop.example/api/products?page=1")
	return crawl.Page{URL: u, Status: 200, ContentType: "application/json", Body: body}
}

// readHolding reads p with a reader of spec and returns the yield, its
// error, and how much more than p's body the live heap held at its peak,
// in multiples of the body's size (the yield included).
func readHolding(t *testing.T, spec extract.Spec, p crawl.Page) (y crawl.Yield, held float64, err error) {
	t.Helper()
	x, err := extract.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	r := NewJSONListing(x)
	peak, before := heappeak.Measure(func() { y, err = r.Read(p) })
	held = float64(peak-min(peak, before)) / float64(len(p.Body))
	t.Logf("%.1f MB body: live heap %.1f MB before, %.1f MB at the peak (%.2fx the body more)",
		float64(len(p.Body))/1e6, float64(before)/1e6, float64(peak)/1e6, held)
	return y, held, err
}

// TestJSONListing9MBCardsHoldAFewTimesTheBody reads a 9 MB listing page
// of 18,000 products as cards through the real reader: every card is an
// item with its values, and the heap holds at most about twice the body
// more at its peak, the 18,000 items included (a tree of the whole
// document alone held eight times the body).
func TestJSONListing9MBCardsHoldAFewTimesTheBody(t *testing.T) {
	y, held, err := readHolding(t, bigCardSpec(), bigPage(bigjson.Listing(1, bigProducts)))
	if err != nil {
		t.Fatal(err)
	}
	if len(y.Items) != bigProducts || len(y.Unusable) != 0 || y.Truncated != "" {
		t.Fatalf("%d items, %d unusable, truncated %q", len(y.Items), len(y.Unusable), y.Truncated)
	}
	for _, id := range []int{1, 2, 3, 5, bigProducts} {
		it := y.Items[id-1]
		sku := bigjson.SKU(id)
		skus := []string{sku + "-S", sku + "-M", sku + "-L"}[:bigjson.Variants(id)]
		image := any(fmt.Sprintf("https://cdn.shop.example/i/%d-0.jpg", id))
		if id%5 == 0 {
			image = nil
		}
		want := []any{int64(id), sku, bigjson.Title(id), "https://shop.example/products/" + strconv.Itoa(id),
			float64(bigjson.Price(id)) / 100, id%3 != 0, skus, image, int64(bigjson.Stock(id))}
		if it.Key != sku || fmt.Sprint(it.Values) != fmt.Sprint(want) {
			t.Errorf("item %d: key %q, values %v, want %q, %v", id, it.Key, it.Values, sku, want)
		}
	}
	if want := "https://shop.example/api/products?page=2"; len(y.Links) != 1 || y.Links[0].URL != want {
		t.Errorf("links %v, want the next page %s", y.Links, want)
	}
	if held > 2.5 {
		t.Errorf("the read held %.2fx the body at its peak, want at most 2.5x", held)
	}
}

// TestJSONListing9MBLinksHoldLessThanTheBody reads the same page for its
// item links: the links are all there, and the heap holds less than the
// body more at its peak.
func TestJSONListing9MBLinksHoldLessThanTheBody(t *testing.T) {
	y, held, err := readHolding(t, bigLinkSpec(), bigPage(bigjson.Listing(1, bigProducts)))
	if err != nil {
		t.Fatal(err)
	}
	if len(y.Links) != bigProducts+1 {
		t.Fatalf("%d links, want %d item links and the next page", len(y.Links), bigProducts)
	}
	if l := y.Links[bigProducts-1]; l.URL != "https://shop.example/products/"+strconv.Itoa(bigProducts) || l.Kind != crawl.KindItem {
		t.Errorf("last item link %+v", l)
	}
	if held > 1 {
		t.Errorf("the read held %.2fx the body at its peak, want at most 1x", held)
	}
}

// TestJSONListingHostile reads pages a hostile or broken API might send,
// each about 9 MB: each gets a clear result, and the heap holds a bounded
// multiple of the body more while it is read. A huge string costs the
// most: encoding/json holds a value whole in its buffer, which grows by
// doubling, beside the decoded string.
func TestJSONListingHostile(t *testing.T) {
	const size = 9 << 20
	huge := func() string { return strings.Repeat("x", size) }
	numbers := func() string { return strings.TrimSuffix(strings.Repeat("12345,", size/6), ",") }
	products := func() string {
		half := string(bigjson.Listing(1, bigProducts/2))
		return half[strings.Index(half, "[") : strings.LastIndex(half, "]")+1]
	}
	for _, tt := range []struct {
		name  string
		body  func() string
		spec  extract.Spec
		bound float64
		check func(t *testing.T, y crawl.Yield, err error)
	}{
		{"deep nesting", func() string {
			return `{"data": {"products": [` + strings.Repeat(`{"a": [`, size/8) + strings.Repeat(`]}`, size/8) + `]}}`
		}, bigCardSpec(), 1,
			func(t *testing.T, y crawl.Yield, err error) {
				if !isFailure(err) || !strings.Contains(err.Error(), "exceeded max depth") {
					t.Errorf("err %v, want a failure: the body is too deep to be read as JSON", err)
				}
			}},
		{"a huge string as a card's title", func() string {
			return `{"data": {"products": [{"sku": "s1", "title": "` + huge() + `"}]}, "next": null}`
		}, bigCardSpec(), 6,
			func(t *testing.T, y crawl.Yield, err error) {
				if err != nil || len(y.Items) != 1 || y.Items[0].Values[2] != huge() {
					t.Errorf("err %v, %d items: want the card with its title", err, len(y.Items))
				}
			}},
		{"a huge string beside the cards", func() string {
			return `{"blob": "` + huge() + `", "data": {"products": [{"sku": "s1", "title": "t"}]}}`
		}, bigCardSpec(), 3,
			func(t *testing.T, y crawl.Yield, err error) {
				if err != nil || len(y.Items) != 1 {
					t.Errorf("err %v, %d items: want the one card", err, len(y.Items))
				}
			}},
		{"9 MB of objects beside the cards", func() string {
			return `{"facets": ` + products() + `, "data": {"products": [{"sku": "s1", "title": "t"}]}}`
		}, bigCardSpec(), 0.5,
			func(t *testing.T, y crawl.Yield, err error) {
				if err != nil || len(y.Items) != 1 {
					t.Errorf("err %v, %d items: want the one card", err, len(y.Items))
				}
			}},
		{"a huge string as the document", func() string { return `"` + huge() + `"` }, bigCardSpec(), 3,
			func(t *testing.T, y crawl.Yield, err error) {
				if err != nil || len(y.Items) != 0 || len(y.Notes) != 1 || !strings.Contains(y.Notes[0].Text, "yields null") {
					t.Errorf("err %v, %d items, notes %v: want a page whose items yield null", err, len(y.Items), y.Notes)
				}
			}},
		{"9 MB of numbers as cards", func() string { return `{"data": {"products": [` + numbers() + `]}}` }, withMaxLinks(bigCardSpec(), 10_000), 2.5,
			func(t *testing.T, y crawl.Yield, err error) {
				if err != nil || len(y.Items) != 0 || len(y.Unusable) != 10_000 ||
					!strings.Contains(y.Unusable[0].Reason, "card 1 is a number, not an object") || !strings.Contains(y.Truncated, "max_links_per_page (10000)") {
					t.Errorf("err %v, %d items, %d unusable, truncated %q: want each card unusable up to max_links_per_page, and the page truncated",
						err, len(y.Items), len(y.Unusable), y.Truncated)
				}
			}},
		{"9 MB of numbers as links", func() string { return `{"data": {"products": [` + numbers() + `]}}` }, bigLinkSpec(), 1,
			func(t *testing.T, y crawl.Yield, err error) {
				if err != nil || len(y.Links) != 0 {
					t.Errorf("err %v, %d links: want none", err, len(y.Links))
				}
			}},
		{"the cards twice under one name", func() string {
			return `{"data": {"products": ` + products() + `, "products": ` + strings.Replace(products(), `"SKU-000001"`, `"SKU-LAST"`, 1) + `}}`
		}, bigCardSpec(), 2.5,
			func(t *testing.T, y crawl.Yield, err error) {
				if err != nil || len(y.Items) != bigProducts/2 || y.Items[0].Key != "SKU-LAST" {
					t.Errorf("err %v, %d items: want the last member's %d cards", err, len(y.Items), bigProducts/2)
				}
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			y, held, err := readHolding(t, tt.spec, bigPage([]byte(tt.body())))
			tt.check(t, y, err)
			if held > tt.bound {
				t.Errorf("the read held %.2fx the body at its peak, want at most %.1fx", held, tt.bound)
			}
		})
	}
}

func withMaxLinks(spec extract.Spec, n int) extract.Spec {
	spec.Listing.MaxLinks = n
	return spec
}

// isFailure reports whether err is a page that is not JSON at all.
func isFailure(err error) bool {
	var pe *crawl.PageError
	return errors.As(err, &pe) && pe.Failure
}

// TestJSONItem9MBReadsWhatItsFieldsRead reads a 9 MB JSON item page whose
// fields read a few values of it: only those are decoded, so the heap
// holds a fraction of the body more at its peak (the tree of the page
// held eight times the body).
func TestJSONItem9MBReadsWhatItsFieldsRead(t *testing.T) {
	x, err := extract.Compile(extract.Spec{
		Item: extract.ItemSpec{Format: extract.FormatJSON},
		Key:  "cursor",
		Fields: []extract.FieldSpec{
			{Name: "cursor", JSON: "data.pageInfo.endCursor"},
			{Name: "total", JSON: "total", Type: extract.TypeInt64},
			{Name: "more", JSON: "data.pageInfo.hasNextPage", Type: extract.TypeBool},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := bigPage(bigjson.Listing(1, bigProducts))
	var y crawl.Yield
	peak, before := heappeak.Measure(func() { y, err = JSONItem{X: x}.Read(p) })
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{"c-18000", int64(bigProducts), true}; len(y.Items) != 1 || fmt.Sprint(y.Items[0].Values) != fmt.Sprint(want) {
		t.Fatalf("items %+v, want one with %v", y.Items, want)
	}
	held := float64(peak-min(peak, before)) / float64(len(p.Body))
	t.Logf("live heap %.1f MB before, %.1f MB at the peak (%.2fx the body more)", float64(before)/1e6, float64(peak)/1e6, held)
	if held > 0.5 {
		t.Errorf("the read held %.2fx the body at its peak, want at most 0.5x", held)
	}
}
