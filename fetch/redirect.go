package fetch

import (
	"fmt"
	"net/http"
)

// checkRedirect is the http.Client redirect policy: it stops (returning the
// 3xx response itself) at targets that are not http/https or out of scope,
// and fails once more than MaxRedirects redirects would be followed.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if c.cfg.MaxRedirects < 0 {
		return http.ErrUseLastResponse
	}
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return http.ErrUseLastResponse
	}
	if c.cfg.InScope != nil && !c.cfg.InScope(req.URL) {
		return http.ErrUseLastResponse
	}
	if len(via) > c.cfg.MaxRedirects {
		return fmt.Errorf("%w: stopped after %d", errTooManyRedirects, c.cfg.MaxRedirects)
	}
	return nil
}
