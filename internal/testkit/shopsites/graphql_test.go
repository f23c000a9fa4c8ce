package shopsites

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// graphqlQuery is the products query the test sends.
const graphqlQuery = `query Products($first: Int!, $after: String) { products(first: $first, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } }`

// graphqlNode is what the test reads of a product node.
type graphqlNode struct {
	ID               string   `json:"id"`
	Handle           string   `json:"handle"`
	Title            string   `json:"title"`
	Vendor           string   `json:"vendor"`
	ProductType      string   `json:"productType"`
	Tags             []string `json:"tags"`
	AvailableForSale bool     `json:"availableForSale"`
	TotalInventory   *int64   `json:"totalInventory"`
	OnlineStoreURL   *string  `json:"onlineStoreUrl"`
	UpdatedAt        string   `json:"updatedAt"`
	PriceRange       struct {
		Min struct{ Amount, CurrencyCode string } `json:"minVariantPrice"`
		Max struct{ Amount string }               `json:"maxVariantPrice"`
	} `json:"priceRange"`
	FeaturedImage *struct{ URL string } `json:"featuredImage"`
}

// graphqlAnswer is a GraphQL response of the products query.
type graphqlAnswer struct {
	Data *struct {
		Products struct {
			Edges    []struct{ Node graphqlNode }
			PageInfo struct {
				HasNextPage bool
				EndCursor   *string
			}
		}
	}
	Errors []struct{ Message string }
}

// postGraphQL sends body to the GraphQL shop with token and decodes the
// answer.
func postGraphQL(t *testing.T, srv string, c *http.Client, token, body string) (int, graphqlAnswer) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv+graphqlPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Shopify-Storefront-Access-Token", token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var a graphqlAnswer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatalf("POST: status %d, %v", resp.StatusCode, err)
	}
	return resp.StatusCode, a
}

// graphqlBody is a products query body asking for first products after
// the cursor (null when "").
func graphqlBody(first int, after string) string {
	cursor := "null"
	if after != "" {
		cursor = strconv.Quote(after)
	}
	return `{"query": "` + graphqlQuery + `", "variables": {"first": ` + strconv.Itoa(first) + `, "after": ` + cursor + `}}`
}

func TestGraphQLPagesByCursorsInTheBody(t *testing.T) {
	shop, srv := newServer(t, GraphQL, Options{Token: testToken})
	truth := shop.Truth(srv.URL)
	var nodes []graphqlNode
	after, pages := "", 0
	for ; pages < 10; pages++ {
		status, a := postGraphQL(t, srv.URL, srv.Client(), testToken, graphqlBody(12, after))
		if status != http.StatusOK || a.Data == nil || len(a.Errors) > 0 {
			t.Fatalf("page %d: status %d, errors %v", pages+1, status, a.Errors)
		}
		for _, e := range a.Data.Products.Edges {
			nodes = append(nodes, e.Node)
		}
		info := a.Data.Products.PageInfo
		if !info.HasNextPage {
			break
		}
		after = *info.EndCursor
	}
	if pages+1 != 3 || len(nodes) != len(truth) {
		t.Fatalf("%d pages, %d products; want 3, %d", pages+1, len(nodes), len(truth))
	}
	var round, unpublished bool
	for i, p := range truth {
		got, v := nodes[i], p.Values
		price, err1 := strconv.ParseFloat(got.PriceRange.Min.Amount, 64)
		high, err2 := strconv.ParseFloat(got.PriceRange.Max.Amount, 64)
		updated, err3 := time.Parse(time.RFC3339, got.UpdatedAt)
		if got.ID != p.Key || got.Handle != v["handle"] || got.Title != v["title"] || got.Vendor != v["vendor"] ||
			err1 != nil || price != v["price"] || err2 != nil || high != v["max_price"] || got.PriceRange.Min.CurrencyCode != v["currency"] ||
			got.AvailableForSale != v["available"] || err3 != nil || !updated.Equal(v["updated_at"].(time.Time)) {
			t.Errorf("%s: served %+v, truth %v", p.Key, got, v)
		}
		if typ, _ := v["product_type"].(string); got.ProductType != typ {
			t.Errorf("%s: productType %q, truth %v", p.Key, got.ProductType, v["product_type"])
		}
		if inv, _ := v["inventory"].(int64); got.TotalInventory == nil && v["inventory"] != nil || got.TotalInventory != nil && *got.TotalInventory != inv {
			t.Errorf("%s: totalInventory %v, truth %v", p.Key, got.TotalInventory, v["inventory"])
		}
		if img, _ := v["image"].(string); got.FeaturedImage == nil && img != "" || got.FeaturedImage != nil && got.FeaturedImage.URL != img {
			t.Errorf("%s: featuredImage %v, truth %v", p.Key, got.FeaturedImage, v["image"])
		}
		if tags, _ := v["tags"].([]string); !slices.Equal(got.Tags, tags) && len(got.Tags)+len(tags) > 0 {
			t.Errorf("%s: tags %v, truth %v", p.Key, got.Tags, tags)
		}
		if got.OnlineStoreURL == nil {
			unpublished = true
			if v["url"] != nil || p.URL != srv.URL+graphqlPath {
				t.Errorf("%s: unpublished, but truth has url %v and URL %s", p.Key, v["url"], p.URL)
			}
		} else if *got.OnlineStoreURL != v["url"] || p.URL != v["url"] {
			t.Errorf("%s: onlineStoreUrl %s, truth %v, URL %s", p.Key, *got.OnlineStoreURL, v["url"], p.URL)
		}
		round = round || strings.HasSuffix(got.PriceRange.Min.Amount, ".0")
	}
	if !round || !unpublished {
		t.Errorf("quirks: a round price as \"20.0\" %v, an unpublished product %v", round, unpublished)
	}
}

func TestGraphQLAnswersOnlyAPostWithTheToken(t *testing.T) {
	_, srv := newServer(t, GraphQL, Options{Token: testToken})
	c := srv.Client()
	if r := get(t, c, srv.URL+graphqlPath); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
		t.Errorf("GET: status %d, Allow %q; want 405 and POST", r.status, r.header.Get("Allow"))
	}
	for _, token := range []string{"", "tok-wrong"} {
		if status, _ := postGraphQL(t, srv.URL, c, token, graphqlBody(12, "")); status != http.StatusUnauthorized {
			t.Errorf("token %q: status %d, want 401", token, status)
		}
	}
	for name, body := range map[string]string{
		"no products query": `{"query": "{ shop { name } }", "variables": {"first": 12}}`,
		"no first":          `{"query": "` + graphqlQuery + `", "variables": {"after": null}}`,
		"unknown cursor":    graphqlBody(12, "bm9wZQ=="),
		"no JSON":           `query=products(first: 12)`,
	} {
		status, a := postGraphQL(t, srv.URL, c, testToken, body)
		if status != http.StatusOK || a.Data != nil || len(a.Errors) == 0 {
			t.Errorf("%s: status %d, data %v, errors %v; want 200 with errors and no data", name, status, a.Data, a.Errors)
		}
	}
}
