package crawl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ListingRequest says how listing pages are requested ([listing] request):
// start URLs read as listing pages, pages of a chain and next pages. Item
// pages, sitemaps and robots.txt are requested with a plain GET.
type ListingRequest struct {
	// Method is "GET" or "POST"; "" is GET.
	Method string
	// Header goes over the run's own headers (a name both give takes this
	// one's values).
	Header http.Header
	// Body is sent as it is, unless a cursor goes into it (see
	// NextCursor); nil sends none.
	Body []byte
}

// post reports whether listing pages are requested with POST: such a
// request is never conditional, and leaves no memo to replay.
func (l *ListingRequest) post() bool { return l != nil && strings.EqualFold(l.Method, http.MethodPost) }

// NextCursor builds the next listing request from the cursor a JSON
// listing page yields (extract.Listing.Cursor): the request that gave the
// page with the cursor as a query parameter, or in its body.
type NextCursor struct {
	// Param is the query parameter the cursor goes into, replacing one
	// there: a string as it is, any other value as its JSON text. The other
	// parameters keep their place and spelling.
	Param string
	// BodyPath are the members of the JSON body the cursor goes into, as
	// its JSON value ("variables", "after"); objects missing on the path
	// are made.
	BodyPath []string
}

// A body cursor rides in the queued URL's fragment, #cursor=<JSON text>:
// no request sends a fragment, and the queue, the seen set and the failed
// set hold the request as they hold any URL, so a stopped run resumes the
// page it stopped on, cursor included, and a chain that comes back to a
// request the traversal already made ends there.
const cursorFragment = "cursor="

// nextCursorEntry is the listing request after the page q, whose cursor is
// value (JSON text).
func (c *NextCursor) nextCursorEntry(q Queued, value string) (Entry, error) {
	u, err := url.Parse(q.URL)
	if err != nil {
		return Entry{}, err
	}
	u.Fragment, u.RawFragment = "", ""
	if c.Param != "" {
		var s string
		text := value
		if json.Unmarshal([]byte(value), &s) == nil {
			text = s
		}
		return Entry{URL: withParam(u, c.Param, text), Kind: KindListing}, nil
	}
	return Entry{URL: u.String() + "#" + cursorFragment + url.QueryEscape(value), Kind: KindListing}, nil
}

// bodyCursor returns the body cursor a queued listing URL carries.
func bodyCursor(raw string) (json.RawMessage, bool) {
	_, frag, ok := strings.Cut(raw, "#"+cursorFragment)
	if !ok {
		return nil, false
	}
	v, err := url.QueryUnescape(frag)
	if err != nil || !json.Valid([]byte(v)) {
		return nil, false
	}
	return json.RawMessage(v), true
}

// withCursor is the JSON body with value at path.
func withCursor(body []byte, path []string, value json.RawMessage) ([]byte, error) {
	var doc any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("the listing request's body is not JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok || len(path) == 0 {
		return nil, errors.New("the listing request's body is not a JSON object")
	}
	for _, name := range path[:len(path)-1] {
		next, ok := obj[name].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[name] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = value
	return json.Marshal(doc)
}

// request is the HTTP request for a queued URL: a listing page as the
// listing request says, with its cursor in the body; anything else a GET.
// hdr holds the run's headers.
func (e *Engine) request(q Queued, hdr http.Header) (Request, error) {
	req := Request{URL: q.URL, Header: hdr, Kind: q.Kind}
	if i := strings.IndexByte(req.URL, '#'); i >= 0 {
		req.URL = req.URL[:i]
	}
	lr := e.s.ListingRequest
	if q.Kind != KindListing || lr == nil {
		return req, nil
	}
	req.Method, req.Body = lr.Method, lr.Body
	if len(lr.Header) > 0 {
		h := make(http.Header, len(hdr)+len(lr.Header))
		for k, v := range hdr {
			h[k] = v
		}
		for k, v := range lr.Header {
			h[k] = v
		}
		req.Header = h
	}
	if cur := e.s.NextCursor; cur != nil && len(cur.BodyPath) > 0 {
		if value, ok := bodyCursor(q.URL); ok {
			body, err := withCursor(lr.Body, cur.BodyPath, value)
			if err != nil {
				return req, err
			}
			req.Body = body
		}
	}
	return req, nil
}
