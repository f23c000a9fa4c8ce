package crawl

import (
	"fmt"
	"strings"

	"github.com/databrew/databrew-stage/verdict"
)

// outOfScope collects the links a page names that the crawl may not
// follow: URLs outside allowed_domains, or not http or https URLs at all.
// On a listing page they are none of the crawl's business (a link to a
// partner shop, a social network). On a sitemap or a robots.txt they are
// sitemaps or item pages the config points the crawl at and it does not
// read, so the traversal did not see everything the site lists: each
// sitemap is a coverage gap of its own, and the item URLs one gap on the
// sitemap that lists them, so no item is removed on their account.
type outOfScope struct {
	sitemaps []verdict.Gap
	items    int
	example  string
}

// add notes a link the crawl does not follow; normal says whether it is
// an http or https URL at all.
func (o *outOfScope) add(l Link, normal bool) {
	why := "outside allowed_domains"
	if !normal {
		why = "not an http or https URL"
	}
	switch l.Kind {
	case KindSitemap:
		o.sitemaps = append(o.sitemaps, verdict.Gap{URL: shortURL(l.URL), Reason: "sitemap " + why + ": not read"})
	case KindItem:
		if o.items++; o.example == "" {
			o.example = shortURL(l.URL)
		}
	}
}

// gaps are the coverage gaps the links left out make on the page q: none
// on a listing page.
func (o *outOfScope) gaps(q Queued, domains []string) []verdict.Gap {
	if q.Kind != KindSitemap && q.Kind != KindRobots {
		return nil
	}
	allowed := strings.Join(domains, ", ")
	hint := fmt.Sprintf("allowed_domains is %s; add the host to allowed_domains to read it", allowed)
	out := make([]verdict.Gap, 0, len(o.sitemaps)+1)
	for _, g := range o.sitemaps {
		g.Reason += " (" + hint + ")"
		out = append(out, g)
	}
	if o.items > 0 {
		out = append(out, verdict.Gap{URL: q.URL, Reason: fmt.Sprintf("sitemap lists %d item URLs the crawl does not read, outside allowed_domains or not http(s), e.g. %s (allowed_domains is %s)",
			o.items, o.example, allowed)})
	}
	return out
}
