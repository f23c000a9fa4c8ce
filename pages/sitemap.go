package pages

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/html/charset"

	"github.com/databrew/databrew-stage/crawl"
)

// MaxSitemapURLs is what the sitemaps protocol allows one sitemap or index
// to list; a reader takes no more.
const MaxSitemapURLs = 50_000

// Sitemap reads sitemaps and sitemap indexes (sitemaps.org): an index's
// <sitemap><loc>s are sitemaps to read, a sitemap's <url><loc>s item
// pages — those Match keeps, when it is set. A gzip file (.xml.gz served
// as a file rather than with Content-Encoding) is unpacked, up to MaxBytes.
// A sitemap is judged by whether it parses, not by its size: one that does
// not is a failure, like a stub page. The XML is read as a stream: a
// sitemap of 50,000 URLs costs their strings, not a document tree.
type Sitemap struct {
	Match    *regexp.Regexp
	MaxBytes int64
}

// Read reads a sitemap or a sitemap index.
func (s Sitemap) Read(p crawl.Page) (crawl.Yield, error) {
	body, err := s.unpack(p.Body)
	if err != nil {
		return crawl.Yield{}, err
	}
	d := xml.NewDecoder(bytes.NewReader(body))
	d.CharsetReader = charset.NewReaderLabel
	var y crawl.Yield
	var root, parent, elem string
	var loc strings.Builder
	// RawToken neither copies nor resolves namespaces (names are matched
	// by their local part), at a third of Token's cost; open holds the
	// elements not yet closed, so a sitemap cut short is still a failure.
	var open []string
	dropped := 0
	for {
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) {
			if len(open) > 0 {
				return crawl.Yield{}, &crawl.PageError{Failure: true, Reason: fmt.Sprintf("not a sitemap: it ends before </%s>", open[len(open)-1])}
			}
			break
		}
		if err != nil {
			return crawl.Yield{}, &crawl.PageError{Failure: true, Reason: fmt.Sprintf("not a sitemap: %v", err)}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			open = append(open, t.Name.Local)
			switch {
			case root == "":
				root = t.Name.Local
				if root != "urlset" && root != "sitemapindex" {
					return crawl.Yield{}, &crawl.PageError{Failure: true, Reason: fmt.Sprintf("not a sitemap: the document is <%s>, not <urlset> or <sitemapindex>", root)}
				}
			case t.Name.Local == "url" || t.Name.Local == "sitemap":
				parent = t.Name.Local
			case t.Name.Local == "loc":
				loc.Reset()
			}
			elem = t.Name.Local
		case xml.CharData:
			if elem == "loc" {
				loc.Write(t)
			}
		case xml.EndElement:
			if len(open) == 0 || open[len(open)-1] != t.Name.Local {
				return crawl.Yield{}, &crawl.PageError{Failure: true, Reason: fmt.Sprintf("not a sitemap: </%s> closes no open element", t.Name.Local)}
			}
			open = open[:len(open)-1]
			if t.Name.Local == "loc" {
				if l, ok := s.link(p.URL, root, parent, loc.String()); ok {
					if len(y.Links) < MaxSitemapURLs {
						y.Links = append(y.Links, l)
					} else {
						dropped++
					}
				}
			}
			elem = ""
		}
	}
	if root == "" {
		return crawl.Yield{}, &crawl.PageError{Failure: true, Reason: "not a sitemap: the document is empty"}
	}
	if dropped > 0 {
		y.Truncated = fmt.Sprintf("sitemap lists %d more URLs than the %d the sitemaps protocol allows: they were not followed", dropped, MaxSitemapURLs)
	}
	return y, nil
}

// link is the link a <loc> makes: in an index, a sitemap; in a sitemap, an
// item page when Match keeps it.
func (s Sitemap) link(base *url.URL, root, parent, raw string) (crawl.Link, bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return crawl.Link{}, false
	}
	u, err := url.Parse(raw)
	if err != nil {
		return crawl.Link{}, false
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	switch {
	case root == "sitemapindex" && parent == "sitemap":
		return crawl.Link{URL: u.String(), Kind: crawl.KindSitemap}, true
	case root == "urlset" && parent == "url" && (s.Match == nil || s.Match.MatchString(u.String())):
		return crawl.Link{URL: u.String(), Kind: crawl.KindItem}, true
	}
	return crawl.Link{}, false
}

// unpack returns the body, gunzipped when it is a gzip file.
func (s Sitemap) unpack(body []byte) ([]byte, error) {
	if len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b {
		return body, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, &crawl.PageError{Failure: true, Reason: fmt.Sprintf("not a sitemap: %v", err)}
	}
	limit := s.MaxBytes
	if limit <= 0 {
		limit = 10 << 20
	}
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	switch {
	case err != nil:
		return nil, &crawl.PageError{Failure: true, Reason: fmt.Sprintf("not a sitemap: gzip: %v", err)}
	case int64(len(out)) > limit:
		return nil, &crawl.PageError{Reason: fmt.Sprintf("sitemap unpacks to more than max_body_bytes (%d)", limit)}
	}
	return out, nil
}
