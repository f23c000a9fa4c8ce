package pages

import (
	"net/url"

	"github.com/temoto/robotstxt"

	"github.com/databrew/databrew-stage/crawl"
)

// Robots reads a robots.txt for the sitemaps its Sitemap: lines name. One
// that names none is an unusable page: the crawl cannot find the host's
// item pages.
type Robots struct{}

// Read reads a robots.txt.
func (Robots) Read(p crawl.Page) (crawl.Yield, error) {
	data, err := robotstxt.FromBytes(p.Body)
	if err != nil {
		return crawl.Yield{}, &crawl.PageError{Reason: "robots.txt does not parse: " + err.Error()}
	}
	var y crawl.Yield
	for _, raw := range data.Sitemaps {
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		if p.URL != nil {
			u = p.URL.ResolveReference(u)
		}
		y.Links = append(y.Links, crawl.Link{URL: u.String(), Kind: crawl.KindSitemap})
	}
	if len(y.Links) == 0 {
		return crawl.Yield{}, &crawl.PageError{Reason: "robots.txt names no sitemap"}
	}
	return y, nil
}
