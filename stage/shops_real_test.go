package stage

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/shopsites"
	"github.com/databrew/databrew-stage/verdict"
)

// The eight shops of SPEC 6c ("Why") each need one of its features; the
// tests below assert what that feature does on them, beyond the truth
// TestShops checks.

// expectClean checks that a run succeeded and completed a traversal
// without a gap, so removals could be judged.
func expectClean(t *testing.T, rep verdict.RunReport) {
	t.Helper()
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.CoverageGaps != 0 || !rep.Traversal.Completed || rep.Traversal.Gaps != 0 {
		t.Fatalf("gaps %+v, traversal %+v; want a clean traversal", rep.Gaps, rep.Traversal)
	}
}

func TestShop_ShopifyPagesEndOnTheEmptyProductsArray(t *testing.T) {
	shop, _, rep, _ := shopRun(t, shopsites.Shopify, shopsites.Options{})
	expectClean(t, rep)
	// Pages 1-3 hold the 34 products, page 4 is {"products": []}: the end.
	if rep.Requests.Total != 4 || rep.Requests.Neutral != 1 || shop.Requests() != 4 || shop.PageRequests("/products.json") != 4 {
		t.Fatalf("requests %+v, %d to the shop; want 4 pages of products.json, the last an empty end", rep.Requests, shop.Requests())
	}
}

func TestShop_WooCommerceStoreAPIIsPagedByItsLinkHeaders(t *testing.T) {
	shop, _, rep, _ := shopRun(t, shopsites.WooCommerce, shopsites.Options{API: shopsites.WooStore})
	expectClean(t, rep)
	// Three pages and no request past the last: only the Link header
	// names a next page.
	if rep.Requests.Total != 3 || shop.Requests() != 3 {
		t.Fatalf("requests %+v, %d to the shop; want the 3 pages", rep.Requests, shop.Requests())
	}
}

func TestShop_WordPressCoreEndsOnA400WithoutAGap(t *testing.T) {
	_, _, rep, _ := shopRun(t, shopsites.WooCommerce, shopsites.Options{API: shopsites.WooCore})
	expectClean(t, rep)
	if rep.Requests.Total != 4 || rep.Requests.Neutral != 1 || rep.Requests.Failed != 0 {
		t.Fatalf("requests %+v; want 3 pages and page 4's 400 as the end", rep.Requests)
	}
}

func TestShop_OffsetAPIIsPagedByItsLimit(t *testing.T) {
	shop, _, rep, _ := shopRun(t, shopsites.Offset, shopsites.Options{API: shopsites.OffsetPages})
	expectClean(t, rep)
	// Offsets 0, 12, 24 and the empty 36: with a step of 1 it would be 36
	// requests, each page overlapping the one before.
	if rep.Requests.Total != 4 || shop.Requests() != 4 {
		t.Fatalf("requests %+v; want offsets 0, 12, 24 and 36", rep.Requests)
	}
	shop, _, rep, _ = shopRun(t, shopsites.Offset, shopsites.Options{API: shopsites.OffsetCursor})
	expectClean(t, rep)
	if rep.Requests.Total != 3 || shop.Requests() != 3 {
		t.Fatalf("cursor: requests %+v; want 3 pages, the last without a next cursor", rep.Requests)
	}
}

func TestShop_GraphQLStorefrontIsReadByPostWithACursorInTheBody(t *testing.T) {
	const token = "shpat-0n1y-p0st"
	t.Setenv(shopsites.TokenEnv, token)
	shop, _, rep, _ := shopRun(t, shopsites.GraphQL, shopsites.Options{Token: token})
	expectClean(t, rep)
	// The endpoint answers GET with 405: every request was a POST with
	// the token, the cursor in its body.
	if rep.Requests.Total != 3 || shop.PageRequests("/api/2025-01/graphql.json") != 3 || shop.Requests() != 3 {
		t.Fatalf("requests %+v, %d to the shop; want 3 POSTs", rep.Requests, shop.Requests())
	}
	if b, _ := json.Marshal(rep); strings.Contains(string(b), token) {
		t.Fatal("the verdict holds the token")
	}
}

func TestShop_NextJSListingIsReadAsCardsFromNextData(t *testing.T) {
	shop, _, rep, _ := shopRun(t, shopsites.NextJS, shopsites.Options{})
	expectClean(t, rep)
	// 4 listing pages carry the 38 products: no product page is fetched
	// (the HTML links only 4 products a page).
	if rep.Requests.Total != 4 || shop.Requests() != 4 || shop.PageRequests("/category/all") != 4 {
		t.Fatalf("requests %+v, %d to the shop; want the 4 listing pages only", rep.Requests, shop.Requests())
	}
}

func TestShop_VueLinksAndFieldsComeFromTheInitialState(t *testing.T) {
	shop, base, rep, _ := shopRun(t, shopsites.Vue, shopsites.Options{})
	expectClean(t, rep)
	truth := shop.Truth(base)
	if rep.Requests.Total != 3+len(truth) {
		t.Fatalf("requests %+v; want 3 listing pages and %d product pages linked from the state", rep.Requests, len(truth))
	}
	undefined := 0
	for _, p := range truth {
		if p.Values["rating"] == nil {
			undefined++
		}
	}
	for name, c := range rep.Fields {
		if want := map[string]int{"rating": undefined}[name]; c.FoundNothing != want {
			t.Errorf("field %s found nothing on %d items, want %d (rating is undefined on %d)", name, c.FoundNothing, want, undefined)
		}
	}
}

// sessionRuns crawls the shop twice, changing prices between, and
// returns the second run's verdict and rows. The shop writes a fresh
// session ID into its links on every page.
func sessionRuns(t *testing.T, kind shopsites.Kind, opts shopsites.Options, prices map[string]int64) (*shopCrawl, verdict.RunReport, map[string]map[string]any) {
	t.Helper()
	c := newShopCrawl(t, kind, opts, (*shopsites.Shop).Config)
	c.cfg.Export.Tombstones = true
	rep := c.run()
	expectClean(t, rep)
	total := rep.Items.New
	for key, cents := range prices {
		if err := c.shop.SetPrice(key, cents); err != nil {
			t.Fatal(err)
		}
	}
	rep = c.run()
	expectClean(t, rep)
	if rep.Items.Changed != len(prices) || rep.Items.Unchanged != total-len(prices) || rep.Items.DuplicateKeys != 0 || rep.Items.Removed != 0 {
		t.Fatalf("second run: items %+v; want the %d price changes, nothing else", rep.Items, len(prices))
	}
	rows := runRows(t, rep.Export.Path)
	if len(rows) != len(prices) {
		t.Fatalf("second run exported %d rows, want the %d changes", len(rows), len(prices))
	}
	for key, cents := range prices {
		if row := rows[key]; row == nil || row["_change"] != "changed" || row["price"] != float64(cents)/100 {
			t.Fatalf("row %s = %v; want the changed price %d cents", key, row, cents)
		}
	}
	return c, rep, rows
}

func TestShop_OsCommerceChangesBehindFreshSessionIDsAreExported(t *testing.T) {
	prices := map[string]int64{"OS-0002": 1_234_56, "OS-0011": 9_99, "OS-0030": 45_00}
	c, _, rows := sessionRuns(t, shopsites.OsCommerce, shopsites.Options{}, prices)
	for _, p := range c.shop.Truth(c.base) {
		if row, ok := rows[p.Key]; ok && row["_url"] != p.URL {
			t.Errorf("%s: _url %v, want %s: osCsid is on the built-in list", p.Key, row["_url"], p.URL)
		}
	}
}

func TestShop_AnUnlistedSessionParameterStillHasChangesExported(t *testing.T) {
	// MODsid is no name of the built-in list and the config lists none:
	// every run links each product under a new URL, and its key moves
	// there because the old URL is gone.
	prices := map[string]int64{"OS-0005": 77_70, "OS-0024": 1_999_00}
	_, _, rows := sessionRuns(t, shopsites.OsCommerce, shopsites.Options{SessionParam: "MODsid"}, prices)
	for key, row := range rows {
		if u, _ := row["_url"].(string); !strings.Contains(u, "&MODsid=") {
			t.Errorf("%s: _url %q; the key holder is the URL the shop linked this run", key, u)
		}
	}
}

func TestShop_SwissPricesReadAndOneOnRequestCountedAsATypeError(t *testing.T) {
	shop, base, rep, rows := shopRun(t, shopsites.Swiss, shopsites.Options{})
	expectClean(t, rep)
	if rep.Items.TypeErrors != 1 || rep.Fields["price"] != (verdict.FieldCounts{TypeErrors: 1}) {
		t.Fatalf("items %+v, price %+v; want one type error: Preis auf Anfrage", rep.Items, rep.Fields["price"])
	}
	grouped := 0
	for _, p := range shop.Truth(base) {
		if f, _ := p.Values["price"].(float64); f >= 1000 && rows[p.Key]["price"] == f {
			grouped++
		}
	}
	if grouped < 10 {
		t.Fatalf("%d prices of CHF 1'000 and more read, want every one of them", grouped)
	}
	// The next run: ;jsessionid= is on the built-in list, so the keys
	// stay put and the change (and the price given on request) is exported.
	_, rep, _ = sessionRuns(t, shopsites.Swiss, shopsites.Options{}, map[string]int64{"300113": 2_450_00, "300120": 18_50})
	if rep.Items.TypeErrors != 0 {
		t.Fatalf("second run: %d type errors, want none once product 13 has a price", rep.Items.TypeErrors)
	}
}
