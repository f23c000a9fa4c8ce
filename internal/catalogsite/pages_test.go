package catalogsite

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// itemIDs returns the item IDs a listing page links to, in page order.
func itemIDs(t *testing.T, doc *goquery.Document) []int {
	t.Helper()
	var ids []int
	doc.Find("article.product_pod h3 a").Each(func(_ int, a *goquery.Selection) {
		href, _ := a.Attr("href")
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(href, "item-"), ".html"))
		if err != nil {
			t.Fatalf("bad item link %q", href)
		}
		ids = append(ids, n)
	})
	return ids
}

func nextHref(doc *goquery.Document) (string, bool) {
	return doc.Find("li.next a").Attr("href")
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestListingPagination(t *testing.T) {
	site, srv := newServer(t, Options{Items: 45, PerPage: 20})
	c := srv.Client()
	if got := site.ListingPages(); got != 3 {
		t.Fatalf("ListingPages = %d, want 3", got)
	}
	wantIDs := [][]int{seq(1, 20), seq(21, 40), seq(41, 45)}
	for n, want := range wantIDs {
		doc := parse(t, fetchOK(t, c, fmt.Sprintf("%s/catalogue/page-%d.html", srv.URL, n+1)).body)
		if got := itemIDs(t, doc); !slices.Equal(got, want) {
			t.Errorf("page %d items = %v, want %v", n+1, got, want)
		}
		href, ok := nextHref(doc)
		if n+1 < 3 && href != fmt.Sprintf("page-%d.html", n+2) {
			t.Errorf("page %d next = %q, want page-%d.html", n+1, href, n+2)
		}
		if n+1 == 3 && ok {
			t.Errorf("last page has a next link %q", href)
		}
	}

	empty := fetchOK(t, c, srv.URL+"/catalogue/page-4.html")
	doc := parse(t, empty.body)
	if n := doc.Find("article.product_pod").Length(); n != 0 {
		t.Errorf("empty page has %d articles", n)
	}
	if _, ok := nextHref(doc); ok {
		t.Error("empty page has a next link")
	}
	if len(empty.body) < 600 {
		t.Errorf("empty page is %d bytes, want >= 600", len(empty.body))
	}
	for _, p := range []string{"page-5.html", "page-0.html", "page-01.html", "page-x.html", "page-2.htm"} {
		if r := fetch(t, c, srv.URL+"/catalogue/"+p); r.status != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, r.status)
		}
	}
}

// crawl follows next links from the start URL and returns the item IDs in
// order and the URL of the last listing page visited.
func crawl(t *testing.T, c *http.Client, base string) ([]int, string) {
	t.Helper()
	var ids []int
	u := StartURL(base)
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("crawl does not end")
		}
		doc := parse(t, fetchOK(t, c, u).body)
		ids = append(ids, itemIDs(t, doc)...)
		href, ok := nextHref(doc)
		if !ok {
			return ids, u
		}
		cur, _ := url.Parse(u)
		ref, err := url.Parse(href)
		if err != nil {
			t.Fatal(err)
		}
		u = cur.ResolveReference(ref).String()
	}
}

func TestCrawlFollowsNextLinks(t *testing.T) {
	_, srv := newServer(t, Options{Items: 45})
	ids, last := crawl(t, srv.Client(), srv.URL)
	if !slices.Equal(ids, seq(1, 45)) {
		t.Errorf("crawled %v", ids)
	}
	if !strings.HasSuffix(last, "/page-3.html") {
		t.Errorf("last page %s, want page-3.html", last)
	}
}

func TestEmptyLastPageOption(t *testing.T) {
	_, srv := newServer(t, Options{Items: 40, PerPage: 20, EmptyLastPage: true})
	ids, last := crawl(t, srv.Client(), srv.URL)
	if !slices.Equal(ids, seq(1, 40)) {
		t.Errorf("crawled %v", ids)
	}
	if !strings.HasSuffix(last, "/page-3.html") {
		t.Errorf("last page %s, want the empty page-3.html", last)
	}
}

var (
	priceRe = regexp.MustCompile(`[0-9]+\.[0-9]+`)
	stockRe = regexp.MustCompile(`([0-9]+) available`)
)

// checkItemDoc extracts the crawler config's fields from an item page and
// compares them with it.
func checkItemDoc(t *testing.T, doc *goquery.Document, it Item) {
	t.Helper()
	main := doc.Find("div.product_main")
	if got := strings.TrimSpace(main.Find("h1").Text()); got != it.Title {
		t.Errorf("item %d title %q, want %q", it.ID, got, it.Title)
	}
	if got := priceRe.FindString(main.Find("p.price_color").Text()); got != it.PriceString() {
		t.Errorf("item %d price %q, want %q", it.ID, got, it.PriceString())
	}
	m := stockRe.FindStringSubmatch(doc.Find("p.instock.availability").Text())
	if m == nil || m[1] != strconv.Itoa(it.Stock) {
		t.Errorf("item %d stock %v, want %d", it.ID, m, it.Stock)
	}
	if got := doc.Find("table tr:nth-child(1) td").Text(); got != it.UPC {
		t.Errorf("item %d upc %q, want %q", it.ID, got, it.UPC)
	}
	var tags []string
	doc.Find("ul.tags li").Each(func(_ int, s *goquery.Selection) { tags = append(tags, s.Text()) })
	if !slices.Equal(tags, it.Tags) {
		t.Errorf("item %d tags %v, want %v", it.ID, tags, it.Tags)
	}
	if src, _ := doc.Find("div.item img").Attr("src"); src != it.Image {
		t.Errorf("item %d image %q, want %q", it.ID, src, it.Image)
	}
}

func TestItemPageFields(t *testing.T) {
	site, srv := newServer(t, Options{Items: 30})
	c := srv.Client()
	for _, id := range []int{1, 7, 14, 23, 30} {
		it, ok := site.Item(id)
		if !ok {
			t.Fatalf("Item(%d) missing", id)
		}
		r := fetchOK(t, c, fmt.Sprintf("%s/catalogue/item-%d.html", srv.URL, id))
		if ct := r.header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		checkItemDoc(t, parse(t, r.body), it)
	}
}

func TestListingCardsCarryItemFields(t *testing.T) {
	site, srv := newServer(t, Options{Items: 20})
	doc := parse(t, fetchOK(t, srv.Client(), StartURL(srv.URL)).body)
	cards := doc.Find("article.product_pod")
	if cards.Length() != 20 {
		t.Fatalf("%d cards, want 20", cards.Length())
	}
	cards.Each(func(i int, card *goquery.Selection) {
		it, _ := site.Item(i + 1)
		title := card.Find("div.product_main h1").Text()
		price := priceRe.FindString(card.Find("div.product_main p.price_color").Text())
		upc := card.Find("table tr:nth-child(1) td").Text()
		if title != it.Title || price != it.PriceString() || upc != it.UPC {
			t.Errorf("card %d = (%q, %q, %q), want (%q, %q, %q)", i, title, price, upc, it.Title, it.PriceString(), it.UPC)
		}
	})
}

func TestPageSizes(t *testing.T) {
	_, srv := newServer(t, Options{Items: 25})
	c := srv.Client()
	for _, p := range []string{"/catalogue/item-1.html", "/catalogue/item-25.html", "/catalogue/page-1.html",
		"/catalogue/page-2.html", "/catalogue/page-3.html", "/private/secret.html"} {
		r := fetchOK(t, c, srv.URL+p)
		if len(r.body) < 600 {
			t.Errorf("%s is %d bytes, want >= 600", p, len(r.body))
		}
		if strings.Contains(p, "item-") && len(r.body) > 2500 {
			t.Errorf("%s is %d bytes, want about 1-2 KB", p, len(r.body))
		}
	}
}

func TestRemoveRestore(t *testing.T) {
	for _, gone := range []int{0, http.StatusGone} {
		t.Run(strconv.Itoa(gone), func(t *testing.T) {
			site, srv := newServer(t, Options{Items: 30, GoneStatus: gone})
			c := srv.Client()
			if !site.Remove(3) || site.Remove(3) || site.Remove(31) || site.Remove(0) {
				t.Fatal("Remove results wrong")
			}
			want := http.StatusNotFound
			if gone != 0 {
				want = gone
			}
			if r := fetch(t, c, srv.URL+"/catalogue/item-3.html"); r.status != want {
				t.Errorf("removed item status %d, want %d", r.status, want)
			}
			if r := fetch(t, c, srv.URL+"/catalogue/item-31.html"); r.status != http.StatusNotFound {
				t.Errorf("unknown item status %d, want 404", r.status)
			}
			ids := itemIDs(t, parse(t, fetchOK(t, c, StartURL(srv.URL)).body))
			wantIDs := append(seq(1, 2), seq(4, 21)...)
			if !slices.Equal(ids, wantIDs) {
				t.Errorf("page 1 after remove: %v", ids)
			}
			if site.VisibleCount() != 29 {
				t.Errorf("VisibleCount %d", site.VisibleCount())
			}
			if it, _ := site.Item(3); !it.Removed {
				t.Error("Item(3).Removed is false")
			}
			if items := site.Items(); len(items) != 30 || !items[2].Removed || items[3].Removed {
				t.Error("Items() snapshot wrong")
			}
			if !site.Restore(3) || site.Restore(3) {
				t.Fatal("Restore results wrong")
			}
			fetchOK(t, c, srv.URL+"/catalogue/item-3.html")
			if ids := itemIDs(t, parse(t, fetchOK(t, c, StartURL(srv.URL)).body)); !slices.Equal(ids, seq(1, 20)) {
				t.Errorf("page 1 after restore: %v", ids)
			}
		})
	}
}

func TestRemoveAllLeavesEmptyFirstPage(t *testing.T) {
	site, srv := newServer(t, Options{Items: 3})
	for id := 1; id <= 3; id++ {
		site.Remove(id)
	}
	if site.ListingPages() != 0 {
		t.Errorf("ListingPages %d, want 0", site.ListingPages())
	}
	doc := parse(t, fetchOK(t, srv.Client(), StartURL(srv.URL)).body)
	if doc.Find("article.product_pod").Length() != 0 {
		t.Error("page 1 is not empty")
	}
}

func TestAddAndSetters(t *testing.T) {
	site, srv := newServer(t, Options{Items: 40})
	c := srv.Client()
	ids := site.Add(5)
	if !slices.Equal(ids, seq(41, 45)) {
		t.Fatalf("Add returned %v", ids)
	}
	if site.ListingPages() != 3 {
		t.Fatalf("ListingPages %d, want 3", site.ListingPages())
	}
	doc := parse(t, fetchOK(t, c, srv.URL+"/catalogue/page-2.html").body)
	if href, _ := nextHref(doc); href != "page-3.html" {
		t.Errorf("page 2 next %q after Add", href)
	}
	if got := itemIDs(t, parse(t, fetchOK(t, c, srv.URL+"/catalogue/page-3.html").body)); !slices.Equal(got, ids) {
		t.Errorf("page 3 = %v", got)
	}

	const title = `Tom & "Jerry" <Édition> '2'`
	if !site.SetPrice(44, 99.5) || !site.SetStock(44, 0) || !site.SetTitle(44, title) {
		t.Fatal("setters failed")
	}
	if site.SetPrice(46, 1) || site.SetStock(0, 1) || site.SetTitle(-1, "x") {
		t.Fatal("setters accepted unknown IDs")
	}
	it, _ := site.Item(44)
	if it.PriceString() != "99.50" || it.Stock != 0 || it.Title != title {
		t.Fatalf("Item(44) = %+v", it)
	}
	checkItemDoc(t, parse(t, fetchOK(t, c, srv.URL+"/catalogue/item-44.html").body), it)
}

func TestItemSnapshotIsACopy(t *testing.T) {
	site := New(Options{Items: 2})
	it, _ := site.Item(1)
	it.Tags[0] = "changed"
	items := site.Items()
	items[0].Tags[0] = "changed"
	if again, _ := site.Item(1); again.Tags[0] == "changed" {
		t.Error("snapshot shares tags with the site")
	}
}

func TestDeterministicData(t *testing.T) {
	a, b, other := New(Options{Items: 5000}).Items(), New(Options{Items: 5000, Seed: 1}).Items(), New(Options{Items: 50, Seed: 2}).Items()
	upcs := map[string]bool{}
	hex := regexp.MustCompile(`^[0-9a-f]{16}$`)
	for i, it := range a {
		if it.ID != i+1 || it.Title != b[i].Title || it.UPC != b[i].UPC || it.Price != b[i].Price || !slices.Equal(it.Tags, b[i].Tags) {
			t.Fatalf("item %d differs between equal seeds", i+1)
		}
		if !hex.MatchString(it.UPC) || upcs[it.UPC] {
			t.Fatalf("item %d UPC %q not unique 16-hex", it.ID, it.UPC)
		}
		upcs[it.UPC] = true
		if it.Price < 5 || it.Price >= 60 || PriceText(it.Price) != strconv.FormatFloat(float64(int(it.Price*100+0.5))/100, 'f', 2, 64) {
			t.Fatalf("item %d price %v", it.ID, it.Price)
		}
		if it.Stock < 0 || it.Stock > 30 || len(it.Tags) < 1 || len(it.Tags) > 3 || it.Removed {
			t.Fatalf("item %d = %+v", it.ID, it)
		}
		if len(slices.Compact(slices.Sorted(slices.Values(it.Tags)))) != len(it.Tags) {
			t.Fatalf("item %d duplicate tags %v", it.ID, it.Tags)
		}
		prefix := "Book " + strconv.Itoa(it.ID) + ": "
		ascii := strings.IndexFunc(it.Title, func(r rune) bool { return r > 127 }) < 0
		if !strings.HasPrefix(it.Title, prefix) || ascii == (it.ID%7 == 0) {
			t.Fatalf("item %d title %q", it.ID, it.Title)
		}
		if it.Image != "../media/"+strconv.Itoa(it.ID)+".jpg" {
			t.Fatalf("item %d image %q", it.ID, it.Image)
		}
	}
	same := 0
	for i := range other {
		if other[i].UPC == a[i].UPC {
			same++
		}
	}
	if same != 0 {
		t.Errorf("%d UPCs equal across seeds", same)
	}
}

func TestRobotsRedirectAndPrivate(t *testing.T) {
	site, srv := newServer(t, Options{})
	c := srv.Client()
	if r := fetchOK(t, c, srv.URL+"/robots.txt"); string(r.body) != DefaultRobots {
		t.Errorf("robots = %q", r.body)
	}
	site.SetRobots("User-agent: *\nDisallow: /\n")
	if r := fetchOK(t, c, srv.URL+"/robots.txt"); string(r.body) != "User-agent: *\nDisallow: /\n" {
		t.Errorf("robots = %q", r.body)
	}
	site.SetRobots("")
	if r := fetch(t, c, srv.URL+"/robots.txt"); r.status != http.StatusNotFound {
		t.Errorf("robots status %d, want 404", r.status)
	}
	if site.RobotsRequests() != 3 || site.Requests() != 0 {
		t.Errorf("RobotsRequests %d, Requests %d", site.RobotsRequests(), site.Requests())
	}
	if r := fetchOK(t, c, srv.URL+"/private/a/b.html"); !strings.Contains(string(r.body), "Private area") {
		t.Error("private page content")
	}

	noFollow := *c
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	r := fetch(t, &noFollow, srv.URL+"/")
	if r.status != http.StatusFound || r.header.Get("Location") != "/catalogue/page-1.html" {
		t.Errorf("/ = %d %q", r.status, r.header.Get("Location"))
	}
	if r := fetch(t, c, srv.URL+"/media/1.jpg"); r.status != http.StatusNotFound {
		t.Errorf("unknown path status %d", r.status)
	}
	resp, err := c.Post(srv.URL+"/catalogue/page-1.html", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST status %d", resp.StatusCode)
	}
}
