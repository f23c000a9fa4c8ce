package config

import (
	"net/url"
	"strings"

	"github.com/databrew/databrew-stage/crawl"
)

// scope checks that every URL the config starts from is inside
// allowed_domains: a start URL or a listed sitemap outside them would
// never be read, and a sitemap the crawl does not read hides the items it
// lists. To read a sitemap on another host (a CDN), its host goes into
// allowed_domains.
func (v *validator) scope(cfg *Config) {
	in := crawl.NewScope(cfg.AllowedDomains)
	allowed := strings.Join(cfg.AllowedDomains, ", ")
	check := func(key string, i int, raw string) {
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" || in.Allows(u) {
			return
		}
		v.errorf(key, "entry %d: host %s is outside allowed_domains (%s): add it to allowed_domains to read %s",
			i+1, u.Hostname(), allowed, raw)
	}
	for i, s := range cfg.StartURLs {
		check("start_urls", i, s)
	}
	for i, s := range cfg.Sources.Sitemaps {
		if s != SitemapsRobots {
			check("listing.sitemaps", i, s)
		}
	}
}
