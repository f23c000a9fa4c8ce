package config

import (
	"encoding/json"
	"net/http"
	"strings"
)

// ListingRequest is [listing] request: how every listing page is
// requested — start URLs read as listing pages, pages of a chain and next
// pages. robots.txt, sitemaps and item pages are requested as before.
type ListingRequest struct {
	// Method is "GET" or "POST".
	Method string
	// Headers go over [request] headers (a name both give takes these
	// values), by canonical header name.
	Headers map[string]Secret
	// Body is the body to send, ${NAME} expanded and $$ read as $; it may
	// hold a secret. HasBody says there is one.
	Body    Secret
	HasBody bool
	// BodyAsWritten is the body as the config writes it, which check shows.
	BodyAsWritten string
	// BodyJSON says the expanded body parses as JSON.
	BodyJSON bool
}

// Header returns the headers to send: Headers, and Content-Type:
// application/json for a JSON body when Headers give no Content-Type.
func (r *ListingRequest) Header() http.Header {
	if r == nil {
		return nil
	}
	h := make(http.Header, len(r.Headers)+1)
	for name, v := range r.Headers {
		h[name] = []string{v.Value()}
	}
	if _, ok := r.Headers["Content-Type"]; !ok && r.HasBody && r.BodyJSON {
		h.Set("Content-Type", "application/json")
	}
	return h
}

type rawListingRequest struct {
	Method  string            `toml:"method"`
	Headers map[string]string `toml:"headers"`
	Body    *string           `toml:"body"`
}

// listingRequest checks [listing] request.
func (v *validator) listingRequest(r *rawListingRequest) *ListingRequest {
	if r == nil {
		return nil
	}
	lr := &ListingRequest{Method: strings.ToUpper(strings.TrimSpace(r.Method))}
	switch lr.Method {
	case "":
		lr.Method = http.MethodGet
	case http.MethodGet, http.MethodPost:
	default:
		v.errorf("listing.request.method", `must be "GET" or "POST", got %q`, r.Method)
	}
	lr.Headers = v.headers("listing.request.headers", r.Headers)
	if r.Body != nil {
		if lr.Method == http.MethodGet {
			v.errorf("listing.request.body", `a GET request has no body: set method = "POST", or leave body out`)
		}
		body, _, ok := v.expandVars("listing.request.body", *r.Body, false)
		lr.Body, lr.HasBody, lr.BodyAsWritten = newSecret(body), ok, *r.Body
		lr.BodyJSON = ok && json.Valid([]byte(body))
	}
	return lr
}

// nextCursor reads where a json next_page's value goes, when the table
// says (param or body).
func (v *validator) nextCursor(r rawListing, t nextPageTable) *Cursor {
	switch {
	case t.param == "" && t.body == "":
		return nil
	case r.Format != "json":
		v.errorf("listing.next_page", `json with param or body reads a json listing: set listing.format = "json"`)
		return nil
	case t.param != "":
		if strings.ContainsAny(t.param, "&=#?/ ") {
			v.errorf("listing.next_page.param", "%q is not a query parameter name", t.param)
			return nil
		}
		return &Cursor{Param: t.param}
	}
	path := strings.Split(t.body, ".")
	for _, p := range path {
		if p == "" {
			v.errorf("listing.next_page.body", "%q is not a dotted path of members such as \"variables.after\"", t.body)
			return nil
		}
	}
	return &Cursor{BodyPath: path}
}

// checkCursor checks a body cursor against the listing request: its body
// must be a JSON object for the cursor to go into.
func (v *validator) checkCursor(cfg *Config) {
	c := cfg.Sources.Cursor
	if c == nil || len(c.BodyPath) == 0 {
		return
	}
	lr := cfg.ListingRequest
	var obj map[string]any
	switch {
	case lr == nil || lr.Method != http.MethodPost || !lr.HasBody:
		v.errorf("listing.next_page.body", `the cursor goes into the body of a POST listing request: set [listing.request] method = "POST" and its JSON body`)
	case json.Unmarshal([]byte(lr.Body.Value()), &obj) != nil:
		v.errorf("listing.request.body", "next_page puts its cursor into the body, so the body must be a JSON object")
	}
}
