package fetch

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/sync/semaphore"
)

// Client performs single HTTP exchanges for the crawler. It is safe for
// concurrent use.
type Client struct {
	cfg Config
	hc  *http.Client
	// budget bounds what big bodies hold at once (Config.BodyBudget);
	// nil without a bound.
	budget *semaphore.Weighted
}

// New returns a Client for cfg, filling zero fields with the defaults.
func New(cfg Config) *Client {
	cfg = cfg.withDefaults()
	rt := cfg.Transport
	if rt == nil {
		rt = newTransport(cfg.MaxConnsPerHost)
	}
	c := &Client{cfg: cfg}
	if cfg.BodyBudget > 0 {
		c.budget = semaphore.NewWeighted(cfg.BodyBudget)
	}
	c.hc = &http.Client{Transport: rt, CheckRedirect: c.checkRedirect}
	if cfg.Jar != nil {
		c.hc.Jar = scopedJar{jar: cfg.Jar, inScope: c.inScope}
	}
	return c
}

// inScope reports whether u is in the crawl's scope: whether a request
// to it carries the configured headers and cookies.
func (c *Client) inScope(u *url.URL) bool { return c.cfg.InScope == nil || c.cfg.InScope(u) }

// Close closes the transport's idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Fetch performs one GET exchange for rawURL with hdr merged into the request
// headers. On failure it returns an *Error; for KindTooLarge it also returns
// the Response (status and headers, no body). The caller should Release the
// Response once done with its Body.
func (c *Client) Fetch(ctx context.Context, rawURL string, hdr http.Header) (*Response, error) {
	return c.Do(ctx, http.MethodGet, rawURL, hdr, nil)
}

// Do is Fetch with another method, and a body to send (nil for none). A
// redirect 307 or 308 sends the body again; 301, 302 and 303 follow with a
// GET, as browsers do.
func (c *Client) Do(ctx context.Context, method, rawURL string, hdr http.Header, body []byte) (*Response, error) {
	start := time.Now()
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	dl := startDeadline(c.cfg.Timeout, func() { cancel(errTimeout) })
	defer dl.stop()

	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(rctx, method, rawURL, rd)
	if err != nil {
		return nil, classify(ctx, rctx, rawURL, err, false)
	}
	if c.inScope(req.URL) {
		maps.Copy(req.Header, c.cfg.Header)
	}
	for k, vs := range hdr {
		if strings.EqualFold(k, "Accept-Encoding") {
			continue // keep the transport's transparent gzip
		}
		req.Header[k] = vs
	}
	if c.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", c.cfg.UserAgent)
	}

	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, classify(ctx, rctx, rawURL, err, false)
	}
	defer resp.Body.Close()

	r := &Response{
		URL:      rawURL,
		FinalURL: resp.Request.URL,
		Status:   resp.StatusCode,
		Header:   resp.Header,
	}
	if target, ok := r.RedirectTarget(); ok {
		r.RedirectNotFollowed = c.notFollowed(target)
	} else if r.Status >= 300 && r.Status < 400 && r.Status != http.StatusNotModified {
		r.RedirectNotFollowed = c.notFollowed(nil)
	}
	b, err := c.readBody(ctx, resp, dl)
	r.Elapsed = time.Since(start)
	if err != nil {
		return nil, classify(ctx, rctx, rawURL, err, true)
	}
	if b.tooLarge {
		putBuffer(b.buf)
		r.RawBytes = int(c.cfg.MaxBodyBytes + 1)
		return r, &Error{Kind: KindTooLarge, URL: rawURL,
			Err: errBodyTooLarge(c.cfg.MaxBodyBytes)}
	}
	r.RawBytes = len(b.data)
	r.buf, r.Body = b.buf, b.data
	if b.held > 0 {
		r.held, r.release = b.held, c.release
	}
	if isText(resp.Header.Get("Content-Type")) {
		r.decode(resp.Header.Get("Content-Type"))
	}
	return r, nil
}
