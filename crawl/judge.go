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
	gap        bool          // an unusable page: a coverage gap, though neutral
	retryAfter time.Duration // the site asked to wait this long
	blocked    string        // the run must stop as blocked
	auth       bool          // 401 with a refresh hook to try
	canceled   bool          // no result: the run is stopping
}

// judge classifies one exchange: ok, neutral (the site's answer about this
// one URL) or failure (trouble with the site).
func (e *Engine) judge(resp *Response, err error) judgment {
	if err != nil {
		var fe *FetchError
		if errors.As(err, &fe) {
			if fe.Canceled {
				return judgment{canceled: true}
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
		if int64(len(resp.Body)) < e.s.MinBodyBytes {
			return judgment{class: verdict.ClassFailure, reason: fmt.Sprintf("HTTP %d with a %d-byte body (min_body_bytes %d)", s, len(resp.Body), e.s.MinBodyBytes)}
		}
		if !resp.HTML {
			return judgment{class: verdict.ClassNeutral, gap: true, reason: fmt.Sprintf("not an HTML page (%s)", resp.Header.Get("Content-Type"))}
		}
		return judgment{class: verdict.ClassOK}
	case s == http.StatusNotModified:
		return judgment{class: verdict.ClassOK}
	case s >= 300 && s < 400:
		return judgment{class: verdict.ClassNeutral, reason: fmt.Sprintf("HTTP %d redirect to %q not followed (out of scope)", s, resp.Header.Get("Location"))}
	case s == http.StatusForbidden, s == http.StatusRequestTimeout, s == http.StatusTooManyRequests, s >= 500:
		return judgment{class: verdict.ClassFailure, reason: fmt.Sprintf("HTTP %d", s), retryAfter: resp.retryAfter(e.d.Clock.Now())}
	default:
		return judgment{class: verdict.ClassNeutral, reason: fmt.Sprintf("HTTP %d", s)}
	}
}
