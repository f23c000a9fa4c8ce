package stage

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/shopsites"
	"github.com/databrew/databrew-stage/verdict"
)

// readmeShop is a config of the README's catalog structures section: the
// TOML block after a "<!-- shop: KIND [api=API] [token] -->" marker.
type readmeShop struct {
	marker string
	kind   shopsites.Kind
	opts   shopsites.Options
	config string
}

var shopMarker = regexp.MustCompile("(?s)<!-- shop: ([a-z]+)((?: [a-z]+(?:=[a-z]+)?)*) -->\\s*```toml\\n(.*?)```")

// readmeShops returns the README's marked configs.
func readmeShops(t *testing.T) []readmeShop {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var shops []readmeShop
	for _, m := range shopMarker.FindAllStringSubmatch(string(readme), -1) {
		s := readmeShop{marker: strings.TrimSpace(m[1] + m[2]), kind: shopsites.Kind(m[1]), config: m[3]}
		for _, opt := range strings.Fields(m[2]) {
			switch {
			case strings.HasPrefix(opt, "api="):
				s.opts.API = strings.TrimPrefix(opt, "api=")
			case opt == "token":
				s.opts.Token = "readme-t0ken"
			default:
				t.Fatalf("README marker %q: unknown option %q", m[0], opt)
			}
		}
		shops = append(shops, s)
	}
	return shops
}

// TestReadmeConfigsCrawlTheirShops runs each config the README shows for a
// catalog structure against the fixture shop built that way (its
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
			t.Errorf("the README shows no config for the %s shop", k)
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
