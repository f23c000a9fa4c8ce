package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/shopsites"
)

// shopConfig serves a fixture shop and writes its config; it returns the
// config's path.
func shopConfig(t *testing.T, kind shopsites.Kind) (string, *shopsites.Shop, string) {
	t.Helper()
	shop, err := shopsites.New(kind, shopsites.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(shop)
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "shop.toml")
	if err := os.WriteFile(path, []byte(shop.Config(srv.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, shop, srv.URL
}

func TestCheckShowsTypedValuesAndWhyAFieldFoundNothing(t *testing.T) {
	path, shop, base := shopConfig(t, shopsites.JSONLD)
	// The first product whose brand holds an ampersand (written \u0026 in
	// its JSON-LD), and one without a high price (a plain offer).
	var amp, plain string
	for _, p := range shop.Truth(base) {
		if brand, _ := p.Values["brand"].(string); amp == "" && strings.Contains(brand, "&") {
			amp = p.URL
		}
		if plain == "" && p.Values["high_price"] == nil {
			plain = p.URL
		}
	}
	if amp == "" || plain == "" {
		t.Fatal("the shop has no product with an ampersand, or none without a high price")
	}
	res := runMain(t, "check", path, "--url", amp)
	if res.code != ExitOK || !strings.Contains(res.stdout, " & ") || strings.Contains(res.stdout, `\u0026`) {
		t.Fatalf("check --url %s: exit %d; want the brand with a plain ampersand", amp, res.code)
	}
	res = runMain(t, "check", path, "--url", plain)
	if !strings.Contains(res.stdout, "high_price   float64   null   (found nothing: json \"offers.highPrice\" yields nothing") {
		t.Fatalf("check does not say why high_price found nothing:\n%s", res.stdout)
	}
}

// A field name longer than the usual column keeps the types aligned.
func TestCheckAlignsLongFieldNames(t *testing.T) {
	path, _, _ := shopConfig(t, shopsites.Messy)
	res := runMain(t, "check", path)
	col := -1
	for _, line := range strings.Split(res.stdout, "\n") {
		for _, typ := range []string{" string ", " float64 ", " int64 ", " bool ", " timestamp "} {
			if i := strings.Index(line, typ); i > 0 && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "  key") {
				if col >= 0 && i != col {
					t.Fatalf("types not aligned at %q:\n%s", line, res.stdout)
				}
				col = i
				break
			}
		}
	}
	if col < 0 || !strings.Contains(res.stdout, "  regular_price float64") {
		t.Fatalf("no typed values in the output:\n%s", res.stdout)
	}
}
