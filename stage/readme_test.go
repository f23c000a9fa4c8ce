package stage

import (
	"regexp"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/docs"
	"github.com/databrew/databrew-stage/internal/testkit/shopsites"
	"github.com/databrew/databrew-stage/verdict"
)

// readmeShop is a config of the documentation's catalog structures
// (docs/real-sites.md): a TOML block marked "<!-- shop: KIND [api=API]
// [token] -->".
type readmeShop struct {
	marker string
	kind   shopsites.Kind
	opts   shopsites.Options
	config string
}

var shopMarker = regexp.MustCompile(`^shop: ([a-z]+)((?: [a-z]+(?:=[a-z]+)?)*)$`)

// readmeShops returns the marked configs of README.md and docs/*.md.
func readmeShops(t *testing.T) []readmeShop {
	t.Helper()
	pages, err := docs.Pages("..")
	if err != nil {
		t.Fatal(err)
	}
	var shops []readmeShop
	marks := 0
	for _, p := range pages {
		marks += strings.Count(p.Text, "<!-- shop:")
		for _, b := range p.Blocks() {
			if !strings.HasPrefix(b.Marker, "shop:") {
				continue
			}
			m := shopMarker.FindStringSubmatch(b.Marker)
			if m == nil || b.Lang != "toml" {
				t.Fatalf("%s: marker %q on a %q block: want <!-- shop: KIND [api=API] [token] --> on a toml block", b.Where(), b.Marker, b.Lang)
			}
			s := readmeShop{marker: strings.TrimSpace(m[1] + m[2]), kind: shopsites.Kind(m[1]), config: b.Text}
			for _, opt := range strings.Fields(m[2]) {
				switch {
				case strings.HasPrefix(opt, "api="):
					s.opts.API = strings.TrimPrefix(opt, "api=")
				case opt == "token":
					s.opts.Token = "readme-t0ken"
				default:
					t.Fatalf("%s: marker %q: unknown option %q", b.Where(), b.Marker, opt)
				}
			}
			shops = append(shops, s)
		}
	}
	if marks != len(shops) {
		t.Fatalf("%d shop markers, %d of them right before a toml block", marks, len(shops))
	}
	return shops
}

// TestReadmeConfigsCrawlTheirShops runs each config the documentation
// (README.md and docs/*.md) shows for a catalog structure against the fixture shop built that way (its
// https://shop.example replaced by the shop's address, with fast waits):
// the export must hold exactly the shop's products.
func TestReadmeConfigsCrawlTheirShops(t *testing.T) {
	shops := readmeShops(t)
	seen := map[shopsites.Kind]bool{}
	for _, s := range shops {
		seen[s.kind] = true
	}
	for _, k := range shopsites.Kinds() {
		if !seen[k] {
			t.Errorf("the documentation shows no config for the %s shop", k)
		}
	}
	for _, s := range shops {
		t.Run(s.marker, func(t *testing.T) {
			if s.kind == shopsites.Rendered {
				needBrowser(t)
			}
			if s.opts.Token != "" {
				t.Setenv(shopsites.TokenEnv, s.opts.Token)
			}
			configFor := func(_ *shopsites.Shop, base string) string {
				return strings.ReplaceAll(s.config, "https://shop.example", base) + `
[policy]
timeout = "5s"
backoff = "1ms"
max_backoff = "5ms"
retry_pass_delay = "10ms"
pause = "0s"
`
			}
			shop, base, rep, rows := shopRunWith(t, s.kind, s.opts, configFor)
			expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
			if rep.CoverageGaps != 0 {
				t.Fatalf("gaps: %+v", rep.Gaps)
			}
			expectTruth(t, shop, base, rows)
		})
	}
}
