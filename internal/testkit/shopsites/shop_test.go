package shopsites

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
)

func TestNewRejectsBadOptions(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		opts Options
	}{
		{"magento", Options{}},
		{JSONLD, Options{Products: -1}},
		{Params, Options{PerPage: -3}},
		{JSONAPI, Options{API: "graphql"}},
		{Gated, Options{Token: "two words"}},
		{WooCommerce, Options{API: APIFull}},
		{Offset, Options{API: WooCore}},
		{GraphQL, Options{}},
		{GraphQL, Options{Token: "two words"}},
		{OsCommerce, Options{SessionParam: "sid&x"}},
	} {
		if _, err := New(c.kind, c.opts); err == nil {
			t.Errorf("New(%q, %+v) succeeded, want an error", c.kind, c.opts)
		}
	}
}

// checkValue reports whether v fits col: nil, or the Go type of its
// column type.
func checkValue(col Column, v any) error {
	if v == nil {
		return nil
	}
	if col.Multiple {
		if l, ok := v.([]string); !ok || len(l) == 0 {
			return fmt.Errorf("%s: %T %v, want a non-empty []string", col.Name, v, v)
		}
		return nil
	}
	ok := false
	switch col.Type {
	case "string":
		_, ok = v.(string)
	case "int64":
		_, ok = v.(int64)
	case "float64":
		_, ok = v.(float64)
	case "bool":
		_, ok = v.(bool)
	case "timestamp":
		var ts time.Time
		ts, ok = v.(time.Time)
		ok = ok && ts.Location() == time.UTC
	}
	if !ok {
		return fmt.Errorf("%s: %T %v does not fit type %s", col.Name, v, v, col.Type)
	}
	return nil
}

func TestTruthHasTheDocumentedItems(t *testing.T) {
	const base = "http://127.0.0.1:8390"
	for _, ts := range allShops() {
		t.Run(ts.name, func(t *testing.T) {
			shop, err := New(ts.kind, ts.opts)
			if err != nil {
				t.Fatal(err)
			}
			truth := shop.Truth(base + "/")
			if len(truth) != ts.items {
				t.Errorf("Truth has %d items, want %d", len(truth), ts.items)
			}
			cols := shop.Columns()
			names := make([]string, len(cols))
			for i, c := range cols {
				names[i] = c.Name
			}
			keys := map[string]bool{}
			nonNil := map[string]bool{}
			for _, p := range truth {
				if p.Key == "" || keys[p.Key] {
					t.Errorf("key %q is empty or repeated", p.Key)
				}
				keys[p.Key] = true
				if !strings.HasPrefix(p.URL, base+"/") {
					t.Errorf("%s: URL %q is not under %s", p.Key, p.URL, base)
				}
				got := make([]string, 0, len(p.Values))
				for k := range p.Values {
					got = append(got, k)
				}
				if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(names))) {
					t.Errorf("%s: value names %v, want the columns %v", p.Key, got, names)
				}
				for _, c := range cols {
					if err := checkValue(c, p.Values[c.Name]); err != nil {
						t.Errorf("%s: %v", p.Key, err)
					}
					if p.Values[c.Name] != nil {
						nonNil[c.Name] = true
					}
				}
			}
			for _, n := range names {
				if !nonNil[n] {
					t.Errorf("column %s is NULL on every item", n)
				}
			}
		})
	}
}

func TestTruthFollowsProducts(t *testing.T) {
	for _, ts := range allShops() {
		t.Run(ts.name, func(t *testing.T) {
			opts := ts.opts
			opts.Products = 9
			shop, err := New(ts.kind, opts)
			if err != nil {
				t.Fatal(err)
			}
			want := 9
			if ts.kind == Variants {
				want = VariantRows(9)
			}
			if got := len(shop.Truth("http://h")); got != want {
				t.Errorf("Truth has %d items with Products 9, want %d", got, want)
			}
		})
	}
}

// fieldOrder returns the field names of cfg's [item.fields] table in the
// order they are written.
func fieldOrder(cfg string) []string {
	var names []string
	in := false
	for _, line := range strings.Split(cfg, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			in = line == "[item.fields]"
			continue
		}
		if in && line != "" && !strings.HasPrefix(line, "#") {
			name, _, _ := strings.Cut(line, "=")
			names = append(names, strings.TrimSpace(name))
		}
	}
	return names
}

func TestConfigMatchesTruth(t *testing.T) {
	const base = "http://127.0.0.1:8390"
	for _, ts := range allShops() {
		t.Run(ts.name, func(t *testing.T) {
			shop, err := New(ts.kind, ts.opts)
			if err != nil {
				t.Fatal(err)
			}
			text := shop.Config(base + "/")
			var cfg struct {
				Name      string   `toml:"name"`
				StartURLs []string `toml:"start_urls"`
				Storage   string   `toml:"storage"`
				Output    string   `toml:"output"`
				Item      struct {
					Key    string                    `toml:"key"`
					Fields map[string]map[string]any `toml:"fields"`
				} `toml:"item"`
				Policy map[string]any `toml:"policy"`
			}
			if err := toml.Unmarshal([]byte(text), &cfg); err != nil {
				t.Fatalf("config does not parse: %v\n%s", err, text)
			}
			if cfg.Name != "shop-"+string(ts.kind) || cfg.Storage != "state" || cfg.Output != "out" {
				t.Errorf("name, storage, output = %q, %q, %q", cfg.Name, cfg.Storage, cfg.Output)
			}
			if len(cfg.StartURLs) == 0 {
				t.Error("no start URL")
			}
			for _, u := range cfg.StartURLs {
				if !strings.HasPrefix(u, base+"/") {
					t.Errorf("start URL %q is not under %s", u, base)
				}
			}
			if strings.Contains(text, "{base}") {
				t.Error("config still holds {base}")
			}
			cols := shop.Columns()
			var names []string
			for _, c := range cols {
				names = append(names, c.Name)
				f, ok := cfg.Item.Fields[c.Name]
				if !ok {
					t.Errorf("column %s is not a field", c.Name)
					continue
				}
				typ, _ := f["type"].(string)
				if typ == "" {
					typ = "string"
				}
				multiple, _ := f["multiple"].(bool)
				if typ != c.Type || multiple != c.Multiple {
					t.Errorf("field %s: type %s multiple %v, column says %s %v", c.Name, typ, multiple, c.Type, c.Multiple)
				}
				_, css := f["css"]
				_, jsonld := f["jsonld"]
				_, expr := f["json"]
				_, js := f["js"]
				if !css && !jsonld && !expr && !js {
					t.Errorf("field %s has no source", c.Name)
				}
			}
			if got := fieldOrder(text); !slices.Equal(got, names) {
				t.Errorf("fields in order %v, columns %v", got, names)
			}
			keyCol := slices.Index(names, cfg.Item.Key)
			if keyCol < 0 {
				t.Fatalf("key %q is not a column", cfg.Item.Key)
			}
			for _, p := range shop.Truth(base) {
				var key string
				switch v := p.Values[cfg.Item.Key].(type) {
				case string:
					key = v
				case int64:
					key = strconv.FormatInt(v, 10)
				}
				if key != p.Key {
					t.Errorf("item %q: its key field %s holds %q", p.Key, cfg.Item.Key, key)
				}
			}
			if cfg.Policy["pause"] != "0s" {
				t.Errorf("policy pause = %v, want 0s", cfg.Policy["pause"])
			}

			// The policy table comes last, so a test can add keys to it.
			if err := toml.Unmarshal([]byte(text+"error_window = 20\n"), &cfg); err != nil {
				t.Fatalf("config with a policy key appended: %v", err)
			}
			if cfg.Policy["error_window"] != int64(20) {
				t.Errorf("an appended key lands in %v, not in [policy]", cfg.Policy)
			}
		})
	}
}

func TestGatedConfigReadsTheTokenFromTheEnvironment(t *testing.T) {
	shop, err := New(Gated, Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	cfg := shop.Config("http://h")
	if !strings.Contains(cfg, `"Bearer ${`+TokenEnv+`}"`) {
		t.Errorf("config does not read the token from $%s:\n%s", TokenEnv, cfg)
	}
	if strings.Contains(cfg, testToken) {
		t.Errorf("config holds the token itself:\n%s", cfg)
	}
}

func TestItemPagesServe(t *testing.T) {
	for _, ts := range allShops() {
		t.Run(ts.name, func(t *testing.T) {
			shop, srv := newServer(t, ts.kind, ts.opts)
			c := admitted(t, shop, srv)
			seen := map[string]bool{}
			for _, p := range shop.Truth(srv.URL) {
				if seen[p.URL] || ts.kind == GraphQL && strings.HasSuffix(p.URL, graphqlPath) {
					continue // an item of a POST listing without a URL of its own has the endpoint's
				}
				seen[p.URL] = true
				r := getOK(t, c, p.URL)
				ct, _, _ := mime.ParseMediaType(r.header.Get("Content-Type"))
				switch ct {
				case "text/html":
					if len(r.body) < 512 {
						t.Errorf("%s: %d bytes, under the default min_body_bytes", p.URL, len(r.body))
					}
				case "application/json":
					if !json.Valid(r.body) {
						t.Errorf("%s: invalid JSON", p.URL)
					}
				default:
					t.Errorf("%s: content type %q", p.URL, ct)
				}
			}
		})
	}
}

func TestRobotsIsOpenAndCountedApart(t *testing.T) {
	for _, ts := range allShops() {
		t.Run(ts.name, func(t *testing.T) {
			shop, srv := newServer(t, ts.kind, ts.opts)
			r := getOK(t, srv.Client(), srv.URL+"/robots.txt")
			if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("robots.txt content type %q", ct)
			}
			if !strings.HasPrefix(string(r.body), "User-agent: *\n") {
				t.Errorf("robots.txt = %q", r.body)
			}
			if shop.RobotsRequests() != 1 || shop.Requests() != 0 {
				t.Errorf("RobotsRequests, Requests = %d, %d, want 1, 0", shop.RobotsRequests(), shop.Requests())
			}
		})
	}
}

func TestRequestsAreCounted(t *testing.T) {
	shop, srv := newServer(t, Params, Options{})
	c := srv.Client()
	getOK(t, c, srv.URL+"/search?page=1")
	getOK(t, c, srv.URL+"/search?page=2")
	getOK(t, c, srv.URL+"/item.php?id=3")
	if r := get(t, c, srv.URL+"/nowhere"); r.status != http.StatusNotFound {
		t.Errorf("/nowhere: status %d, want 404", r.status)
	}
	resp, err := c.Post(srv.URL+"/search", "text/plain", strings.NewReader("q"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", resp.StatusCode)
	}
	if got := shop.Requests(); got != 5 {
		t.Errorf("Requests = %d, want 5", got)
	}
	for path, want := range map[string]int64{"/search": 3, "/item.php": 1, "/nowhere": 1, "/item.php?id=3": 0} {
		if got := shop.PageRequests(path); got != want {
			t.Errorf("PageRequests(%q) = %d, want %d", path, got, want)
		}
	}
}

func TestHeadAnswersWithoutBody(t *testing.T) {
	_, srv := newServer(t, Messy, Options{})
	resp, err := srv.Client().Head(srv.URL + "/shop/all")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength < 512 {
		t.Errorf("HEAD: status %d, length %d", resp.StatusCode, resp.ContentLength)
	}
}
