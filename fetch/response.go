package fetch

import (
	"bytes"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Response is the outcome of one HTTP exchange.
type Response struct {
	// URL is the URL as requested.
	URL string
	// FinalURL is the URL of the last request, after redirects.
	FinalURL *url.URL
	// Status is the HTTP status code.
	Status int
	// Header holds the response headers.
	Header http.Header
	// Body is the body decoded to UTF-8. Config.MaxBodyBytes bounds the bytes
	// read (RawBytes); decoding a legacy charset may make Body longer.
	Body []byte
	// RawBytes is the number of body bytes read after gzip decoding and
	// before charset decoding.
	RawBytes int
	// Charset is the detected charset name ("utf-8", "windows-1252", ...);
	// empty for responses that are neither HTML nor text.
	Charset string
	// Elapsed is the time from the start of Fetch to the end of the body.
	Elapsed time.Duration
	// RedirectNotFollowed says why a 3xx response was returned rather than
	// followed: "max_redirects = 0", "out of scope", "not an http or https
	// URL" or "no usable Location"; empty for other responses.
	RedirectNotFollowed string

	buf *bytes.Buffer
	// held is what a big body holds of the client's body budget, given
	// back through release.
	held    int64
	release func(int64)
}

// Release returns Body's buffer to the pool, and what a big body holds of
// the body budget (Config.BodyBudget) to the client. Body must not be used
// after. Calling Release more than once is harmless.
func (r *Response) Release() {
	if r == nil {
		return
	}
	putBuffer(r.buf)
	if r.held > 0 {
		r.release(r.held)
	}
	r.buf, r.Body, r.held, r.release = nil, nil, 0, nil
}

// RetryAfter parses the Retry-After header relative to now: delta-seconds or
// an HTTP-date. A date in the past yields 0. ok is false when the header is
// absent or unparsable.
func (r *Response) RetryAfter(now time.Time) (d time.Duration, ok bool) {
	v := strings.TrimSpace(r.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		const maxSecs = math.MaxInt64 / int64(time.Second)
		return time.Duration(min(max(secs, 0), maxSecs)) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// RedirectTarget returns the resolved Location of a 3xx response that was
// not followed (out of scope, not http/https, or redirects disabled).
func (r *Response) RedirectTarget() (*url.URL, bool) {
	if r.Status < 300 || r.Status > 399 {
		return nil, false
	}
	loc := r.Header.Get("Location")
	if loc == "" {
		return nil, false
	}
	var u *url.URL
	var err error
	if r.FinalURL != nil {
		u, err = r.FinalURL.Parse(loc)
	} else {
		u, err = url.Parse(loc)
	}
	if err != nil {
		return nil, false
	}
	return u, true
}

// mediaType returns the Content-Type without parameters or surrounding space.
func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.TrimSpace(ct)
}
