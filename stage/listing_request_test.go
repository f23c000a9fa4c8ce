package stage

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// graphqlAPI serves /api/graphql in front of the catalog site as a
// GraphQL storefront does: POST only (GET answers 405), a JSON body whose
// variables.after is the cursor, 10 products a page with a pageInfo. It
// records the requests it was sent.
type graphqlAPI struct {
	mu     sync.Mutex
	bodies []string
	tokens []string
	types  []string
}

func newGraphqlAPI(f *fixture, items int) *graphqlAPI {
	g := &graphqlAPI{}
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path != "/api/graphql" {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, `{"errors":[{"message":"use POST"}]}`, http.StatusMethodNotAllowed)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		g.mu.Lock()
		g.bodies = append(g.bodies, string(raw))
		g.tokens = append(g.tokens, r.Header.Get("X-Storefront-Access-Token"))
		g.types = append(g.types, r.Header.Get("Content-Type"))
		g.mu.Unlock()
		var req struct {
			Query     string         `json:"query"`
			Variables map[string]any `json:"variables"`
		}
		if err := json.Unmarshal(raw, &req); err != nil || !strings.Contains(req.Query, "$after") {
			http.Error(w, `{"errors":[{"message":"bad request"}]}`, http.StatusBadRequest)
			return
		}
		from := 0
		if after, ok := req.Variables["after"].(string); ok {
			from, _ = strconv.Atoi(strings.TrimPrefix(after, "c"))
		}
		edges := []map[string]any{}
		for id := from + 1; id <= min(from+10, items); id++ {
			edges = append(edges, map[string]any{"node": map[string]any{"url": fmt.Sprintf("/catalogue/item-%d.html", id)}})
		}
		end := min(from+10, items)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]any{"products": map[string]any{
			"edges": edges, "pageInfo": map[string]any{"hasNextPage": end < items, "endCursor": fmt.Sprintf("c%d", end)}}}})
	})
	return g
}

const graphqlExtraction = `
[listing]
format = "json"
item_links = "data.products.edges[].node.url"
next_page = { json = "data.products.pageInfo.hasNextPage && data.products.pageInfo.endCursor", body = "variables.after" }

[listing.request]
method = "POST"
headers = { "X-Storefront-Access-Token" = "${SHOP_TOKEN}" }
body = '''{"query": "query Products($$after: String) { products(first: 10, after: $after) { edges { node { url } } pageInfo { hasNextPage endCursor } } }", "variables": {"after": null}}'''

[item]
key = "upc"

[item.fields]
title = { css = "div.product_main h1", required = true }
upc   = { css = "table tr:nth-child(1) td", required = true }
`

func TestListingRequest_AGraphQLStorefrontPagedByABodyCursor(t *testing.T) {
	t.Setenv("SHOP_TOKEN", "s3cr3t-token")
	f := newFixture(t, catalogsite.Options{Items: 35})
	g := newGraphqlAPI(f, 35)
	cfg := f.configOf(graphqlExtraction, nil, tombstonesOn, f.srv.URL+"/api/graphql")
	rep := f.run(cfg, Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Items.New != 35 || rep.Requests.Total != 4+35 || rep.CoverageGaps != 0 {
		t.Fatalf("items %+v, requests %+v, gaps %+v", rep.Items, rep.Requests, rep.Gaps)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.bodies) != 4 || !strings.Contains(g.bodies[0], `"after": null`) || !strings.Contains(g.bodies[3], `"after":"c30"`) {
		t.Fatalf("bodies %q: want the body as written first, then the cursors", g.bodies)
	}
	if !strings.HasPrefix(g.bodies[0], `{"query": "query Products($after: String) { products(first: 10, after: $after)`) {
		t.Fatalf("first body %q: want it sent as written, $$ as $", g.bodies[0])
	}
	for i := range g.tokens {
		if g.tokens[i] != "s3cr3t-token" || g.types[i] != "application/json" {
			t.Fatalf("request %d: token %q, content type %q", i, g.tokens[i], g.types[i])
		}
	}
	b, _ := json.Marshal(rep)
	if strings.Contains(string(b), "s3cr3t") {
		t.Fatal("the verdict holds the token")
	}
}

func TestListingRequest_AStoppedRunResumesThePageWithItsCursor(t *testing.T) {
	t.Setenv("SHOP_TOKEN", "t")
	f := newFixture(t, catalogsite.Options{Items: 35})
	g := newGraphqlAPI(f, 35)
	cfg := f.configOf(graphqlExtraction, map[string]string{"concurrency": "1"}, "", f.srv.URL+"/api/graphql")
	// Page 1, its 10 items, page 2 and one item: the third page waits.
	rep := f.runCtx(t.Context(), cfg, Options{MaxRequests: 13})
	if rep.Stop != verdict.StopMaxRequests {
		t.Fatalf("stop %s", rep.Stop)
	}
	rep = f.run(cfg, Options{})
	if rep.Items.New+rep.Items.Unchanged < 25 || rep.Stop != verdict.StopQueueEmpty {
		t.Fatalf("second run: %+v", rep.Items)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	seen := map[string]int{}
	for _, b := range g.bodies {
		seen[b]++
	}
	if len(g.bodies) != 4 || len(seen) != 4 {
		t.Fatalf("%d requests, %d distinct bodies: want each page requested once, the resumed one with its cursor:\n%s", len(g.bodies), len(seen), strings.Join(g.bodies, "\n"))
	}
}

// cursorAPI serves /api/items?cursor=... : {"items": [...], "next_cursor": "..."}.
func cursorAPI(f *fixture, items int) {
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.URL.Path != "/api/items" {
			next.ServeHTTP(w, r)
			return
		}
		from := 0
		if c := r.URL.Query().Get("cursor"); c != "" {
			from, _ = strconv.Atoi(strings.TrimPrefix(c, "after-"))
		}
		var list []map[string]any
		for id := from + 1; id <= min(from+10, items); id++ {
			list = append(list, map[string]any{"url": fmt.Sprintf("/catalogue/item-%d.html", id)})
		}
		var nextCursor any
		if from+10 < items {
			nextCursor = fmt.Sprintf("after-%d", from+10)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"items": list, "next_cursor": nextCursor})
	})
}

func TestListingRequest_AGetCursorInAQueryParameter(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 35})
	cursorAPI(f, 35)
	extraction := strings.Replace(jsonChainExtraction, `pages = { param = "page", start = 1 }`, `next_page = { json = "next_cursor", param = "cursor" }`, 1)
	rep := f.run(f.configOf(extraction, nil, tombstonesOn, f.srv.URL+"/api/items?limit=10"), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Items.New != 35 || rep.Requests.Total != 4+35 || rep.CoverageGaps != 0 {
		t.Fatalf("items %+v, requests %+v, gaps %+v", rep.Items, rep.Requests, rep.Gaps)
	}
}
