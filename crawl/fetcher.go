package crawl

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/databrew/databrew-stage/verdict"
)

// Fetcher performs one HTTP exchange. It does not retry: the engine does.
// A fetch that did not produce a response returns an error, ideally a
// *FetchError that says how the engine should count it.
type Fetcher interface {
	Fetch(ctx context.Context, req Request) (*Response, error)
}

// Request is one HTTP request the engine asks a Fetcher for.
type Request struct {
	// Method is the HTTP method; "" is GET.
	Method string
	// URL is the URL to request; a fragment, which no request sends, is
	// left out.
	URL string
	// Header holds the headers the engine adds: a refresh hook's, the
	// listing request's, conditional ones.
	Header http.Header
	// Body is sent as it is; nil sends none.
	Body []byte
	// Kind is the kind of page the URL is, so a Fetcher can load pages of
	// some kinds another way (in a browser, say).
	Kind Kind
}

// Response is one HTTP response with its body read.
type Response struct {
	// URL is the URL as requested; FinalURL is where redirects ended.
	URL      string
	FinalURL *url.URL
	Status   int
	Header   http.Header
	// Body is the response body decoded to UTF-8.
	Body []byte
	// Charset names the encoding Body was decoded from, when known.
	Charset string
	// RedirectNotFollowed says why a 3xx response was not followed.
	RedirectNotFollowed string
	// Release, when set, returns Body's buffer for reuse; the engine calls
	// it once it is done with the page.
	Release func()
	// Documents counts the further documents the exchange loaded (the
	// frames of a page a browser rendered): each is one more request
	// against the budget and in the verdict's count.
	Documents int
	// Replayless says no memo may answer for the page (a page a browser
	// rendered is never requested conditionally): it keeps no validators.
	Replayless bool
}

func (r *Response) release() {
	if r != nil && r.Release != nil {
		r.Release()
		r.Release = nil
	}
}

// retryAfter reads the Retry-After header: delta seconds or an HTTP date.
func (r *Response) retryAfter(now time.Time) time.Duration {
	if r == nil {
		return 0
	}
	v := r.Header.Get("Retry-After")
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		return max(time.Duration(secs)*time.Second, 0)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// FetchError is a fetch that produced no usable response, with the class
// the engine counts it as.
type FetchError struct {
	// Class is ClassFailure for trouble with the site (timeouts, resets,
	// truncated bodies) and ClassNeutral for an answer about one URL (an
	// over-size body, a redirect loop).
	Class verdict.Class
	// Reason says it in a few words for the report.
	Reason string
	// Canceled is true when the caller's context ended the fetch: it is
	// not a result at all, and the URL stays queued.
	Canceled bool
	// Fatal is true when the Fetcher cannot fetch anything any more (a
	// browser that crashed again after its restart): not a result, the
	// URL stays queued, and the run stops with the error stop and Reason
	// as its detail.
	Fatal bool
	Err   error
}

// Error describes the failed fetch.
func (e *FetchError) Error() string {
	if e.Err == nil {
		return e.Reason
	}
	return fmt.Sprintf("%s: %v", e.Reason, e.Err)
}

// Unwrap returns the underlying error.
func (e *FetchError) Unwrap() error { return e.Err }

// Robots answers whether robots.txt lets the crawler fetch a URL, and the
// host's crawl delay.
type Robots interface {
	Allowed(ctx context.Context, u *url.URL) (bool, time.Duration, error)
}

// Pacer spaces requests to one host.
type Pacer interface {
	Wait(ctx context.Context, host string) error
	SetHostDelay(host string, d time.Duration)
}
