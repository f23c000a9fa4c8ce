package fetch

import (
	"net/http"
	"net/url"
	"time"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultTimeout         = 30 * time.Second // DefaultTimeout is Config.Timeout's default.
	DefaultMaxBodyBytes    = 10 << 20         // DefaultMaxBodyBytes is Config.MaxBodyBytes's default.
	DefaultMaxRedirects    = 10               // DefaultMaxRedirects is what a crawl config follows unless it says otherwise.
	DefaultMaxConnsPerHost = 64               // DefaultMaxConnsPerHost is Config.MaxConnsPerHost's default.
)

// Config configures a Client. The zero value is usable.
type Config struct {
	// UserAgent is sent on every request; it wins over a User-Agent in the
	// per-request headers. Empty leaves the choice to those headers.
	UserAgent string
	// Timeout bounds the whole exchange including the body read; 0 = 30s.
	Timeout time.Duration
	// MaxBodyBytes caps the bytes read from the body after gzip decoding;
	// 0 = 10 MiB.
	MaxBodyBytes int64
	// MaxRedirects is the number of redirects followed; 0 (or negative)
	// follows none: the 3xx response is returned.
	MaxRedirects int
	// InScope reports whether a URL is in the crawl's scope: a redirect
	// target out of it is not followed, and a request to it carries
	// neither Header nor a cookie of Jar. nil = every URL.
	InScope func(*url.URL) bool
	// Header is sent on every request to a URL in scope, each redirect
	// included; the per-request headers win over it, and UserAgent over
	// both.
	Header http.Header
	// Jar holds the cookies sent to URLs in scope, and keeps those they
	// set when it is a keeping jar (NewJar). nil sends none.
	Jar http.CookieJar
	// MaxConnsPerHost caps the connections to one host, in use and idle
	// together; a request beyond it waits for one to be free. 0 = 64.
	// Ignored when Transport is set.
	MaxConnsPerHost int
	// Transport replaces the default tuned *http.Transport.
	Transport http.RoundTripper
	// BodyBudget bounds the bytes that big bodies (past their first MiB),
	// of all fetches together, hold at once: a body that grows past its
	// first MiB waits, reading no further, until its whole possible size
	// (its Content-Length, else MaxBodyBytes) fits in what other big
	// bodies leave (one body alone may take it all), and holds that until
	// its Response is released. The wait does not count against Timeout.
	// 0 = no bound.
	BodyBudget int64
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxConnsPerHost <= 0 {
		c.MaxConnsPerHost = DefaultMaxConnsPerHost
	}
	if len(c.Header) > 0 {
		h := make(http.Header, len(c.Header))
		for k, vs := range c.Header {
			h[http.CanonicalHeaderKey(k)] = vs
		}
		c.Header = h
	}
	return c
}
