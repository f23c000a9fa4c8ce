package extract

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"github.com/databrew/databrew-stage/extract/htmltree"
)

// baseSel finds the document's <base href>.
var baseSel = cascadia.MustCompile("base[href]")

// Parse parses an HTML page once; the document can then be given to both
// Listing and Item. A page of plain markup is built by htmltree, faster,
// into the tree html.Parse would build; any other by html.Parse. The
// strings of the tree may share one copy of the page: what outlives the
// page is copied out of them (the values a field or link builds are new
// strings).
func (x *Extractor) Parse(body []byte) (*goquery.Document, error) {
	if root, ok := htmltree.Parse(body); ok {
		return goquery.NewDocumentFromNode(root), nil
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("extract: parse html: %w", err)
	}
	return doc, nil
}

// ParseTransient is Parse for a caller that is done with the document,
// and with every node and selection it took from it, once it calls
// release: a page of plain markup is then built from the nodes of pages
// released before it (see htmltree.ParseTree), and hands its own to the
// pages after it. What Listing and Items return of a document is new
// strings and values, so nothing they return depends on the nodes.
func (x *Extractor) ParseTransient(body []byte) (doc *goquery.Document, release func(), err error) {
	if t, ok := htmltree.ParseTree(body); ok {
		return goquery.NewDocumentFromNode(t.Root), t.Release, nil
	}
	doc, err = goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, keep, fmt.Errorf("extract: parse html: %w", err)
	}
	return doc, keep, nil
}

// keep is the release of a document html.Parse built: its nodes are left
// to the garbage collector.
func keep() {}

// BaseURL returns the URL relative references in doc resolve against: the
// first <base href>, itself resolved against pageURL, or else pageURL. The
// result may be pageURL itself and must not be modified. With a nil
// pageURL only an absolute <base href> counts.
func BaseURL(doc *goquery.Document, pageURL *url.URL) *url.URL {
	if doc == nil {
		return pageURL
	}
	n := firstMatch(doc.Selection, baseSel)
	if n == nil {
		return pageURL
	}
	for _, a := range n.Attr {
		if a.Key != "href" || a.Namespace != "" {
			continue
		}
		href := cleanHref(a.Val)
		ref, err := url.Parse(href)
		if err != nil || href == "" {
			return pageURL
		}
		if pageURL != nil {
			return pageURL.ResolveReference(ref)
		}
		if ref.IsAbs() {
			return ref
		}
		return nil
	}
	return pageURL
}

// resolve resolves ref against base (nil: ref is used as it is).
func resolve(base *url.URL, ref string) (*url.URL, error) {
	u, err := url.Parse(cleanHref(ref))
	if err != nil {
		return nil, err
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	return u, nil
}

// cleanHref strips leading and trailing whitespace and, as browsers do,
// tabs and newlines inside the reference.
func cleanHref(s string) string {
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	return s
}

// linkURL turns an href into an absolute link without fragment and with a
// lower-case host; false for empty, unparsable and relative-without-base
// links and for javascript:, mailto:, tel: and data: links.
func linkURL(base *url.URL, href string) (string, bool) {
	if strings.TrimSpace(href) == "" {
		return "", false
	}
	u, err := resolve(base, href)
	if err != nil || !u.IsAbs() {
		return "", false
	}
	switch u.Scheme {
	case "javascript", "mailto", "tel", "data":
		return "", false
	}
	u.Fragment, u.RawFragment = "", ""
	if hasUpper(u.Host) {
		u.Host = strings.ToLower(u.Host)
	}
	return u.String(), true
}

// firstMatch returns the first node in or under s that m matches.
func firstMatch(s *goquery.Selection, m cascadia.Matcher) *html.Node {
	for _, n := range s.Nodes {
		if m.Match(n) {
			return n
		}
		if found := cascadia.Query(n, m); found != nil {
			return found
		}
	}
	return nil
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}
