package config

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Request is what the [request] table adds to every request to the
// allowed domains: headers, cookies, and whether cookies the site sets
// are kept.
type Request struct {
	// Headers are sent on every request to the allowed domains, by
	// canonical header name ("Accept-Language").
	Headers map[string]Secret
	// Cookies are sent to the allowed domains, by cookie name.
	Cookies map[string]Secret
	// CookieJar keeps the cookies the site sets during a run (on
	// redirects too) and sends them back to it.
	CookieJar bool
}

// Header returns the headers to send, as an http.Header.
func (r Request) Header() http.Header {
	h := make(http.Header, len(r.Headers))
	for name, v := range r.Headers {
		h[name] = []string{v.Value()}
	}
	return h
}

// HTTPCookies returns the cookies to send, in name order.
func (r Request) HTTPCookies() []*http.Cookie {
	out := make([]*http.Cookie, 0, len(r.Cookies))
	for _, name := range slices.Sorted(maps.Keys(r.Cookies)) {
		out = append(out, &http.Cookie{Name: name, Value: r.Cookies[name].Value()})
	}
	return out
}

// reservedHeaders are the headers a config may not set, and why: the HTTP
// client writes them, another key sets them, or they would change what
// every page answers.
var reservedHeaders = map[string]string{
	"Host":                "the host comes from the URL",
	"Content-Length":      "the HTTP client sets it",
	"Transfer-Encoding":   "the HTTP client sets it",
	"Connection":          "the HTTP client sets it",
	"Keep-Alive":          "the HTTP client sets it",
	"Proxy-Connection":    "the HTTP client sets it",
	"Upgrade":             "the HTTP client sets it",
	"Te":                  "the HTTP client sets it",
	"Trailer":             "the HTTP client sets it",
	"Expect":              "the HTTP client sets it",
	"Accept-Encoding":     "the HTTP client asks for gzip and decodes it itself",
	"Proxy-Authorization": "it is meant for a proxy, not for the site",
	"Cookie":              "write cookies in request.cookies",
	"User-Agent":          "set it with policy.user_agent",
	"Range":               "every page would answer only part of itself",
	"If-Range":            "every page would answer only part of itself",
	"If-None-Match":       "every page could answer 304 Not Modified, which a run cannot use",
	"If-Modified-Since":   "every page could answer 304 Not Modified, which a run cannot use",
	"If-Match":            "every page could answer 412 Precondition Failed",
	"If-Unmodified-Since": "every page could answer 412 Precondition Failed",
}

// request checks the [request] table. Its messages name keys and
// variables, never a value: a value may be a secret.
func (v *validator) request(r rawRequest) Request {
	req := Request{CookieJar: r.CookieJar, Headers: v.headers("request.headers", r.Headers)}
	if len(r.Cookies) > 0 {
		req.Cookies = make(map[string]Secret, len(r.Cookies))
	}
	for _, name := range v.declared("request.cookies", r.Cookies) {
		key := "request.cookies." + name
		if !httpguts.ValidHeaderFieldName(name) {
			v.errorf(key, "%q is not a valid cookie name (letters, digits and !#$%%&'*+-.^_`|~ only)", name)
			continue
		}
		val, vars, ok := v.expand(key, r.Cookies[name])
		if !ok {
			continue
		}
		if (&http.Cookie{Name: name, Value: val}).Valid() != nil {
			v.errorf(key, "the value%s is not a valid cookie value: it holds a quote, a semicolon, a backslash, a control character or a character outside ASCII", from(vars))
			continue
		}
		req.Cookies[name] = newSecret(val)
	}
	return req
}

// headers checks a table of request headers (table names it): valid
// names and values, none reserved or given twice, ${NAME} expanded. Its
// messages name keys and variables, never a value.
func (v *validator) headers(table string, raw map[string]string) map[string]Secret {
	if len(raw) == 0 {
		return nil
	}
	out := make(map[string]Secret, len(raw))
	for _, name := range v.declared(table, raw) {
		key := table + "." + name
		canon := http.CanonicalHeaderKey(name)
		if !httpguts.ValidHeaderFieldName(name) {
			v.errorf(key, "%q is not a valid header name (letters, digits and !#$%%&'*+-.^_`|~ only)", name)
			continue
		}
		if why, ok := reservedHeaders[canon]; ok {
			v.errorf(key, "a config may not set %s: %s", canon, why)
			continue
		}
		if _, dup := out[canon]; dup {
			v.errorf(key, "%s is given twice (header names ignore case)", canon)
			continue
		}
		val, vars, ok := v.expand(key, raw[name])
		if !ok {
			continue
		}
		if !httpguts.ValidHeaderFieldValue(val) {
			v.errorf(key, "the value%s is not a valid header value: it holds a line break or another control character", from(vars))
			continue
		}
		out[canon] = newSecret(val)
	}
	return out
}

// declared returns the names of a [request] map in the order the file
// writes them, so its problems are reported in a stable order.
func (v *validator) declared(table string, m map[string]string) []string {
	names := slices.Collect(maps.Keys(m))
	slices.SortFunc(names, func(a, b string) int {
		if d := v.keys.order(table+"."+a) - v.keys.order(table+"."+b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return names
}

// expand replaces each ${NAME} in s with the environment variable NAME;
// $$ is a $ itself. It returns the names it read. An unset or empty
// variable and a $ that starts neither are problems of key; no message
// quotes s.
func (v *validator) expand(key, s string) (out string, vars []string, ok bool) {
	return v.expandVars(key, s, true)
}

// expandVars is expand; unless strict, a $ that starts neither ${NAME}
// nor $$ is kept as it is (a GraphQL variable in a body is written $after).
func (v *validator) expandVars(key, s string, strict bool) (out string, vars []string, ok bool) {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			return b.String(), vars, true
		}
		b.WriteString(s[:i])
		s = s[i+1:]
		end := strings.IndexByte(s, '}')
		switch {
		case strings.HasPrefix(s, "$"):
			b.WriteByte('$')
			s = s[1:]
			continue
		case !strict && (!strings.HasPrefix(s, "{") || end < 0 || !validVarName(s[1:end])):
			b.WriteByte('$')
			continue
		case !strings.HasPrefix(s, "{"):
			v.errorf(key, "a $ must start ${NAME}, a variable from the environment (write $$ for a $ itself)")
			return "", nil, false
		case end < 0:
			v.errorf(key, "a ${ is not closed by } (write ${NAME}, or $$ for a $ itself)")
			return "", nil, false
		case !validVarName(s[1:end]):
			v.errorf(key, "a ${...} holds no valid variable name (letters, digits and _, not starting with a digit)")
			return "", nil, false
		}
		name := s[1:end]
		s = s[end+1:]
		val := v.getenv(name)
		if val == "" {
			v.errorf(key, "${%s} is not set in the environment (or is empty)", name)
			return "", nil, false
		}
		vars = append(vars, name)
		b.WriteString(val)
	}
}

// validVarName reports whether name is an environment variable name as
// shells write them: letters, digits and _, not starting with a digit.
func validVarName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, c := range []byte(name) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// from names the variables a value was read from, for a message about
// the value: " (from ${SHOP_TOKEN})", or "" for a value written as is.
func from(vars []string) string {
	if len(vars) == 0 {
		return ""
	}
	return " (from ${" + strings.Join(vars, "}, ${") + "})"
}
