package crawl

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/databrew/databrew-stage/verdict"
)

// judgment is what one exchange came to.
type judgment struct {
	class      verdict.Class
	reason     string
	gone       bool          // 404 or 410: the site says the URL is gone
	endsChain  bool          // 400, 404, 410 or 416: past the end of a pages chain
	unusable   bool          // a page its reader could not use: a coverage gap
	retryAfter time.Duration // the site asked to wait this long
	blocked    string        // the run must stop as blocked
	auth       bool          // 401 with a refresh hook to try
	canceled   bool          // no result: the run is stopping
	fatal      string        // no result: the fetcher gave up, the run stops with error
	// notModified: a 304 to a conditional request; the page's memo
	// stands for it.
	notModified bool
}

// judge classifies one exchange: ok, neutral (the site's answer about this
// one URL) or failure (trouble with the site). A 304 Not Modified is ok
// when the request was conditional (the page as the run last read it),
// neutral otherwise.
func (e *Engine) judge(resp *Response, err error, conditional bool) judgment {
	if err != nil {
		var fe *FetchError
		if errors.As(err, &fe) {
			if fe.Canceled {
				return judgment{canceled: true}
			}
			if fe.Fatal {
				return judgment{fatal: fe.Reason}
			}
			return judgment{class: fe.Class, reason: fe.Reason}
		}
		return judgment{class: verdict.ClassFailure, reason: err.Error()}
	}
	s := resp.Status
	if s == http.StatusUnauthorized && e.d.Refresh != nil {
		return judgment{auth: true}
	}
	if e.blockCodes[s] {
		return judgment{blocked: fmt.Sprintf("HTTP %d at %s (a [block] status)", s, resp.URL)}
	}
	switch {
	case s >= 200 && s < 300:
		// What the body holds is the page reader's to judge.
		return judgment{class: verdict.ClassOK}
	case s == http.StatusNotModified && conditional:
		return judgment{class: verdict.ClassOK, notModified: true}
	case s == http.StatusNotModified:
		// The run has no memo of the page to reuse: the answer says
		// nothing about the URL's content.
		return judgment{class: verdict.ClassNeutral, reason: "HTTP 304 Not Modified to a request that was not conditional"}
	case s >= 300 && s < 400:
		return judgment{class: verdict.ClassNeutral, reason: fmt.Sprintf("HTTP %d redirect to %q not followed (%s)", s, resp.Header.Get("Location"), resp.RedirectNotFollowed)}
	case s == http.StatusForbidden, s == http.StatusRequestTimeout, s == http.StatusTooManyRequests, s >= 500:
		return judgment{class: verdict.ClassFailure, reason: fmt.Sprintf("HTTP %d", s), retryAfter: resp.retryAfter(e.d.Clock.Now())}
	default:
		return judgment{class: verdict.ClassNeutral, reason: fmt.Sprintf("HTTP %d", s), gone: s == http.StatusNotFound || s == http.StatusGone,
			endsChain: endsChain(s)}
	}
}

// leavesGap reports whether a neutral result leaves a hole in what the
// traversal saw of the site, so that items it did not see cannot be judged
// removed: every page that yields nothing usable does, whatever its status,
// except an item page the site says is gone (404, 410) — the one answer
// that is evidence of a removal — and a page after the first of a pages
// chain answering 400, 404, 410 or 416, the end of the chain.
func leavesGap(e Entry, j judgment) bool {
	return j.class == verdict.ClassNeutral && !(e.Kind == KindItem && j.gone) && !(endOfPages(e) && j.endsChain)
}
