package fetch

import (
	"fmt"
	"net/http"
	"net/url"
)

// checkRedirect is the http.Client redirect policy: it stops (returning the
// 3xx response itself) at targets that are not http/https or out of scope,
// and when redirects are off, and fails once more than MaxRedirects
// redirects would be followed. A hop it follows is in scope, so it
// carries the configured headers: net/http copies the first request's
// headers to each hop, but drops Authorization and Cookie once the
// domain changes; a configured header missing from the hop is set again
// here (with the configured value, even where the caller's per-request
// headers had overridden it).
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if c.notFollowed(req.URL) != "" {
		return http.ErrUseLastResponse
	}
	if len(via) > c.cfg.MaxRedirects {
		return fmt.Errorf("%w: stopped after %d", errTooManyRedirects, c.cfg.MaxRedirects)
	}
	for k, vs := range c.cfg.Header {
		if _, ok := req.Header[k]; !ok {
			req.Header[k] = vs
		}
	}
	return nil
}

// notFollowed says why a redirect to target is not followed, or "" when it
// is.
func (c *Client) notFollowed(target *url.URL) string {
	switch {
	case target == nil:
		return "no usable Location"
	case c.cfg.MaxRedirects <= 0:
		return "max_redirects = 0"
	case target.Scheme != "http" && target.Scheme != "https":
		return "not an http or https URL"
	case c.cfg.InScope != nil && !c.cfg.InScope(target):
		return "out of scope"
	}
	return ""
}
