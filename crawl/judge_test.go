package crawl

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/verdict"
)

func TestJudge(t *testing.T) {
	e := &Engine{d: Deps{Clock: SystemClock{}}, blockCodes: map[int]bool{451: true}}
	page := make([]byte, 600)
	stub := make([]byte, 200)
	resp := func(status int, body []byte, hdr ...string) *Response {
		h := http.Header{}
		for i := 0; i+1 < len(hdr); i += 2 {
			h.Set(hdr[i], hdr[i+1])
		}
		return &Response{URL: "http://h/x", Status: status, Body: body, Header: h}
	}
	redirect := func(status int, location, why string) *Response {
		r := resp(status, nil, "Location", location)
		r.RedirectNotFollowed = why
		return r
	}
	// itemGap: whether the result of an item page is a coverage gap; the
	// result of a listing page is one whenever it is neutral (failures are
	// counted as gaps through the failed set).
	cases := []struct {
		name    string
		resp    *Response
		err     error
		class   verdict.Class
		reason  string
		itemGap bool
	}{
		{"a usable page is ok", resp(200, page), nil, verdict.ClassOK, "", false},
		{"an unasked-for 304 is neutral and unusable", resp(304, nil), nil, verdict.ClassNeutral, "304", true},
		{"404 is neutral: the item is gone", resp(404, page), nil, verdict.ClassNeutral, "HTTP 404", false},
		{"410 is neutral: the item is gone", resp(410, page), nil, verdict.ClassNeutral, "HTTP 410", false},
		{"400 is neutral, and no evidence of a removal", resp(400, page), nil, verdict.ClassNeutral, "HTTP 400", true},
		{"403 is a failure", resp(403, page), nil, verdict.ClassFailure, "HTTP 403", false},
		{"408 is a failure", resp(408, page), nil, verdict.ClassFailure, "HTTP 408", false},
		{"429 is a failure", resp(429, page), nil, verdict.ClassFailure, "HTTP 429", false},
		{"500 is a failure", resp(500, page), nil, verdict.ClassFailure, "HTTP 500", false},
		{"503 is a failure", resp(503, page), nil, verdict.ClassFailure, "HTTP 503", false},
		{"a redirect not followed is neutral and unusable", redirect(302, "http://elsewhere/", "out of scope"), nil, verdict.ClassNeutral, "not followed (out of scope)", true},
		{"a timeout is a failure", nil, &FetchError{Class: verdict.ClassFailure, Reason: "timeout"}, verdict.ClassFailure, "timeout", false},
		{"an over-size body is neutral and unusable", nil, &FetchError{Class: verdict.ClassNeutral, Reason: "body over max_body_bytes"}, verdict.ClassNeutral, "max_body_bytes", true},
		{"a redirect loop is neutral and unusable", nil, &FetchError{Class: verdict.ClassNeutral, Reason: "too many redirects"}, verdict.ClassNeutral, "redirects", true},
		{"an unknown error is a failure", nil, errors.New("boom"), verdict.ClassFailure, "boom", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := e.judge(c.resp, c.err, false)
			if j.class != c.class || !strings.Contains(j.reason, c.reason) {
				t.Fatalf("judge = %s %q, want %s containing %q", j.class, j.reason, c.class, c.reason)
			}
			item, listing := Entry{URL: "http://h/x", Kind: KindItem}, Entry{URL: "http://h/x", Kind: KindListing}
			if got := leavesGap(item, j); got != c.itemGap {
				t.Errorf("an item page's gap = %v, want %v", got, c.itemGap)
			}
			if got, want := leavesGap(listing, j), c.class == verdict.ClassNeutral; got != want {
				t.Errorf("a listing page's gap = %v, want %v", got, want)
			}
		})
	}
	if j := e.judge(resp(451, page), nil, false); j.blocked == "" {
		t.Fatal("a [block] status must block")
	}
	if j := e.judge(nil, &FetchError{Canceled: true}, false); !j.canceled {
		t.Fatal("a canceled fetch is no result")
	}
	// What a 2xx body holds (a stub, another format) is its reader's to
	// judge: see package pages.
	if j := e.judge(resp(200, stub), nil, false); j.class != verdict.ClassOK {
		t.Fatalf("a 2xx is ok to the judge, whatever its body: %+v", j)
	}
	if j := e.judge(resp(503, page, "Retry-After", "7"), nil, false); j.retryAfter != 7*time.Second {
		t.Fatalf("Retry-After = %s", j.retryAfter)
	}
	if j := e.judge(resp(304, nil), nil, true); j.class != verdict.ClassOK || !j.notModified {
		t.Fatalf("a 304 to a conditional request = %+v, want ok and not modified", j)
	}
	if j := e.judge(resp(304, nil), nil, false); j.class != verdict.ClassNeutral || j.notModified {
		t.Fatalf("a 304 to a request that was not conditional = %+v, want neutral", j)
	}
}

func TestBackoff(t *testing.T) {
	e := &Engine{s: Settings{Backoff: 100 * time.Millisecond, MaxBackoff: time.Second}}
	for attempt, lo := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		d := e.backoff(attempt, 0)
		if d < lo || d > lo+lo/4 {
			t.Fatalf("backoff(%d) = %s, want %s plus at most a quarter", attempt, d, lo)
		}
	}
	if d := e.backoff(10, 0); d != time.Second {
		t.Fatalf("backoff is capped at max_backoff, got %s", d)
	}
	if d := e.backoff(0, 700*time.Millisecond); d != 700*time.Millisecond {
		t.Fatalf("Retry-After longer than the backoff is honoured, got %s", d)
	}
	if d := e.backoff(0, time.Hour); d != time.Second {
		t.Fatalf("Retry-After is honoured up to max_backoff, got %s", d)
	}
}

func TestBudget(t *testing.T) {
	b := &budget{limit: 3}
	for i := 0; i < 3; i++ {
		if !b.take() {
			t.Fatalf("token %d refused", i)
		}
	}
	if b.take() || !b.exhausted() {
		t.Fatal("a spent budget must refuse")
	}
	unlimited := &budget{}
	for i := 0; i < 1000; i++ {
		if !unlimited.take() {
			t.Fatal("no budget means no limit")
		}
	}
}
