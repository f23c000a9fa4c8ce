package config

import (
	"net/url"
	"regexp"
	"strings"
)

// Sources say where a crawl finds item page URLs besides the links of
// listing pages (SPEC 6b, [listing]).
type Sources struct {
	// Sitemaps are "robots" (the Sitemap: lines of each start host's
	// robots.txt) or sitemap URLs; indexes are followed.
	Sitemaps []string
	// SitemapMatch, when set, keeps only the <loc>s it matches as item
	// pages.
	SitemapMatch *regexp.Regexp
	// Pages, when set, follows ?param=start, start+step, ... from each
	// start URL until a page of the chain ends it (see crawl's chain.go).
	Pages *Pages
	// LinkHeader is next_page = { header = "link" }: a listing page's next
	// page is the rel="next" target of its Link header.
	LinkHeader bool
	// Cursor, when set, is where the cursor a json next_page names goes:
	// the next listing request is the one that gave the page with it.
	Cursor *Cursor
}

// Cursor is next_page = { json, param } or { json, body }.
type Cursor struct {
	// Param is the query parameter the cursor goes into, or
	Param string
	// BodyPath the members of the JSON body it goes into.
	BodyPath []string
}

// Pages is parameter pagination: Param takes Start, Start+Step, ...
type Pages struct {
	Param string
	Start int
	Step  int
}

// SitemapsRobots names, in [listing] sitemaps, the Sitemap: lines of each
// start host's robots.txt.
const SitemapsRobots = "robots"

// HostsOnly reports whether the start URLs only name the hosts whose
// robots.txt is read: sitemaps, and no listing page to read.
func (c *Config) HostsOnly() bool {
	l := c.Extract.Listing
	return len(c.Sources.Sitemaps) > 0 && l.ItemLinks == "" && l.ItemLinksScript == nil && !l.HasCards() && l.NextPage == "" && c.Sources.Pages == nil && !c.Sources.LinkHeader
}

type rawPages struct {
	Param string `toml:"param"`
	Start *int   `toml:"start"`
	Step  *int   `toml:"step"`
}

// sources checks [listing]'s sitemaps, sitemap_match and pages.
func (v *validator) sources(r rawListing) Sources {
	var s Sources
	for i, sm := range r.Sitemaps {
		sm = strings.TrimSpace(sm)
		if sm == SitemapsRobots {
			s.Sitemaps = append(s.Sitemaps, sm)
			continue
		}
		u, err := url.Parse(sm)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			v.errorf("listing.sitemaps", "entry %d: %q is neither \"robots\" nor an http or https URL", i+1, sm)
			continue
		}
		s.Sitemaps = append(s.Sitemaps, u.String())
	}
	if r.SitemapMatch != "" {
		re, err := regexp.Compile(r.SitemapMatch)
		switch {
		case err != nil:
			v.errorf("listing.sitemap_match", "%v", err)
		case len(s.Sitemaps) == 0:
			v.errorf("listing.sitemap_match", "needs listing.sitemaps")
		default:
			s.SitemapMatch = re
		}
	}
	if r.Pages != nil {
		p := Pages{Param: strings.TrimSpace(r.Pages.Param), Start: 1, Step: 1}
		if r.Pages.Start != nil {
			p.Start = *r.Pages.Start
		}
		if r.Pages.Step != nil {
			p.Step = *r.Pages.Step
		}
		switch {
		case p.Param == "" || strings.ContainsAny(p.Param, "&=#?/ "):
			v.errorf("listing.pages.param", "%q is not a query parameter name", r.Pages.Param)
		case p.Start < 0:
			v.errorf("listing.pages.start", "must not be negative, got %d", p.Start)
		case p.Step < 1:
			v.errorf("listing.pages.step", "must be a positive integer (the offset between pages), got %d", p.Step)
		default:
			s.Pages = &p
		}
	}
	return s
}

// isSitemapURL reports whether a start URL names a sitemap rather than a
// listing page: its path ends in .xml or .xml.gz.
func isSitemapURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	p := strings.ToLower(u.Path)
	return strings.HasSuffix(p, ".xml") || strings.HasSuffix(p, ".xml.gz")
}

// StartKinds tells each start URL's role: a sitemap (its path ends in
// .xml or .xml.gz), a listing page, or, when the config has no listing to
// read, only the host whose robots.txt names sitemaps.
func (c *Config) StartKinds() (listings, sitemaps, hosts []string) {
	for _, s := range c.StartURLs {
		switch {
		case isSitemapURL(s):
			sitemaps = append(sitemaps, s)
		case c.HostsOnly():
			hosts = append(hosts, s)
		default:
			listings = append(listings, s)
		}
	}
	return listings, sitemaps, hosts
}
