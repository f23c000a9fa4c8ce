package render

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/verdict"
)

// paused decides a request the page wants to send, or a document's answer
// it received, and lets it go on or fails it.
func (t *tab) paused(ev *fetch.EventRequestPaused) {
	if ev.ResponseStatusCode != 0 || ev.ResponseErrorReason != "" {
		t.answered(ev)
		return
	}
	u, err := url.Parse(ev.Request.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		t.proceed(ev, nil)
		return
	}
	doc := ev.ResourceType == network.ResourceTypeDocument
	main := ev.FrameID == cdp.FrameID(t.t.TargetID)
	t.mu.Lock()
	first := doc && main && !t.sent
	hop := doc && main && t.sent && ev.RedirectedRequestID != ""
	t.sent = t.sent || first
	t.mu.Unlock()
	o := &t.r.o
	switch {
	case first:
		// The page's own request: the engine asked robots.txt and the
		// pacer already, and adds its headers (a refresh's).
		t.proceed(ev, t.req.Header)
		return
	case hop:
		// A redirect of the page's document: its answer was judged at
		// the response stage (scope, max_redirects).
		t.proceed(ev, t.req.Header)
		return
	case browsersOwn(ev):
		// Not the page's: the browser asks for a favicon after each
		// load. It never reaches the site and counts nowhere.
		t.refuse(ev)
		return
	case !doc && slices.Contains(o.Block, typeName(ev.ResourceType)):
		t.r.stats.blockedType.Add(1)
		t.refuse(ev)
		return
	case o.InScope != nil && !o.InScope(u):
		t.r.stats.offDomain.Add(1)
		t.refuse(ev)
		return
	}
	if o.Robots != nil {
		allowed, _, _ := o.Robots.Allowed(t.ctx, u)
		if t.ctx.Err() != nil {
			return
		}
		if !allowed {
			t.r.stats.robotsOut.Add(1)
			t.refuse(ev)
			return
		}
	}
	if o.Pacer != nil {
		if err := o.Pacer.Wait(t.ctx, u.Host); err != nil {
			return
		}
	}
	t.mu.Lock()
	if doc {
		t.documents++
	}
	t.mu.Unlock()
	if !doc {
		t.r.stats.subresources.Add(1)
	}
	t.proceed(ev, nil)
}

// answered judges the answer to a document's request: a frame's goes on;
// the page's own ends the load early unless it is a 2xx to render or a
// redirect to follow.
func (t *tab) answered(ev *fetch.EventRequestPaused) {
	if ev.FrameID != cdp.FrameID(t.t.TargetID) || ev.ResponseErrorReason != "" {
		t.proceed(ev, nil)
		return
	}
	status := int(ev.ResponseStatusCode)
	h := http.Header{}
	for _, e := range ev.ResponseHeaders {
		h.Add(e.Name, e.Value)
	}
	o := &t.r.o
	t.mu.Lock()
	t.status, t.header, t.finalURL = status, h, ev.Request.URL
	resp := t.response(ev.Request.URL)
	t.mu.Unlock()
	if status >= 300 && status < 400 && status != http.StatusNotModified {
		target, err := url.Parse(ev.Request.URL)
		if err == nil {
			target, err = target.Parse(h.Get("Location"))
		}
		why := ""
		t.mu.Lock()
		t.hops++
		hops := t.hops
		t.mu.Unlock()
		switch {
		case err != nil || h.Get("Location") == "":
			why = "no usable Location"
		case o.MaxRedirects <= 0:
			why = "max_redirects = 0"
		case target.Scheme != "http" && target.Scheme != "https":
			why = "not an http or https URL"
		case o.InScope != nil && !o.InScope(target):
			why = "out of scope"
		case hops > o.MaxRedirects:
			t.end(nil, &crawl.FetchError{Class: verdict.ClassNeutral, Reason: "too many redirects",
				Err: fmt.Errorf("stopped after %d", o.MaxRedirects)})
			t.refuse(ev)
			return
		}
		if why == "" {
			t.proceed(ev, nil)
			return
		}
		resp.RedirectNotFollowed = why
		t.end(resp, nil)
		t.refuse(ev)
		return
	}
	if status < 200 || status >= 300 {
		// The engine judges the status; nothing of the page is read.
		t.end(resp, nil)
		t.refuse(ev)
		return
	}
	if n, err := parseLength(h.Get("Content-Length")); err == nil && o.MaxBodyBytes > 0 && n > o.MaxBodyBytes {
		t.end(nil, &crawl.FetchError{Class: verdict.ClassNeutral, Reason: "body over max_body_bytes"})
		t.refuse(ev)
		return
	}
	t.proceed(ev, nil)
}

// proceed lets a request go on, with the config's headers and extra over
// its own.
func (t *tab) proceed(ev *fetch.EventRequestPaused, extra http.Header) {
	params := fetch.ContinueRequestParams{RequestID: ev.RequestID}
	if ev.ResponseStatusCode == 0 && ev.ResponseErrorReason == "" && (len(t.r.o.Header) > 0 || len(extra) > 0) {
		params.Headers = headers(ev.Request.Headers, t.r.o.Header, extra)
	}
	_, _ = cdp.Call(t.ctx, t.t, fetch.ContinueRequest, params)
}

// refuse fails a request before it leaves the browser.
func (t *tab) refuse(ev *fetch.EventRequestPaused) {
	// A tab that closed meanwhile has nothing left to answer.
	_, _ = cdp.Call(t.ctx, t.t, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
}

// headers are a request's own headers with the config's and extra over
// them (by name, case-insensitively), but no conditional ones: a rendered
// page is never requested conditionally.
func headers(own network.Headers, config, extra http.Header) []*fetch.HeaderEntry {
	merged := http.Header{}
	for k, v := range own {
		merged.Set(k, fmt.Sprint(v))
	}
	for _, h := range []http.Header{config, extra} {
		for k, vs := range h {
			merged.Del(k)
			for _, v := range vs {
				merged.Add(k, v)
			}
		}
	}
	merged.Del("If-None-Match")
	merged.Del("If-Modified-Since")
	out := make([]*fetch.HeaderEntry, 0, len(merged))
	for k, vs := range merged {
		for _, v := range vs {
			out = append(out, &fetch.HeaderEntry{Name: k, Value: v})
		}
	}
	return out
}

// typeName is a resource type as [render] block names it: the protocol's
// name in lower case, "other" for one block cannot name.
// browsersOwn reports whether ev is a request the browser makes for itself
// rather than for the page: its favicon, which Chromium sends with the
// resource type Other and the destination image.
func browsersOwn(ev *fetch.EventRequestPaused) bool {
	if ev.ResourceType != network.ResourceTypeOther {
		return false
	}
	for k, v := range ev.Request.Headers {
		if strings.EqualFold(k, "Sec-Fetch-Dest") && v == "image" {
			return true
		}
	}
	u, err := url.Parse(ev.Request.URL)
	return err == nil && strings.HasSuffix(u.Path, "/favicon.ico")
}

func typeName(t network.ResourceType) string {
	name := strings.ToLower(string(t))
	switch name {
	case "stylesheet", "image", "media", "font", "script", "xhr", "fetch", "eventsource", "websocket", "manifest", "texttrack", "ping", "prefetch":
		return name
	}
	return "other"
}

func parseLength(s string) (int64, error) {
	var n int64
	_, err := fmt.Sscan(s, &n)
	return n, err
}
