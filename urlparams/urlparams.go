// Package urlparams holds the URL parameters that never tell two pages
// apart — trackers (utm_*, gclid, srsltid) and session IDs (jsessionid,
// osCsid) — and drops them from URLs, so a page is one page whatever link
// led to it (SPEC 6c, "Volatile URL parameters").
package urlparams

import (
	"errors"
	"net/url"
	"strings"

	"github.com/databrew/databrew-stage/internal/glob"
)

// Defaults are the built-in patterns: the trackers and the Java and PHP
// shop sessions that real links carry.
var Defaults = []string{"utm_*", "gclid", "fbclid", "msclkid", "srsltid", "_ga", "jsessionid", "phpsessid", "oscsid", "zenid", "xtcsid"}

// Filter drops the query parameters, and the ;name=value path parameters
// of any path segment, whose names match one of its patterns. The zero
// value and nil drop nothing. A Filter is immutable and safe for
// concurrent use.
type Filter struct {
	patterns []string // lower case
}

// New compiles patterns: parameter names with * standing for any run of
// characters and ? for one, matched case-insensitively. An empty pattern
// is an error.
func New(patterns []string) (*Filter, error) {
	f := &Filter{}
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			return nil, errors.New("an empty pattern names no parameter")
		}
		f.patterns = append(f.patterns, p)
	}
	return f, nil
}

// Matches reports whether the parameter name matches a pattern.
func (f *Filter) Matches(name string) bool {
	if f == nil || len(f.patterns) == 0 || name == "" {
		return false
	}
	name = strings.ToLower(name)
	for _, p := range f.patterns {
		if glob.Match(p, name) {
			return true
		}
	}
	return false
}

// Empty reports whether the filter drops nothing.
func (f *Filter) Empty() bool { return f == nil || len(f.patterns) == 0 }

// Strip drops the matching parameters from u, in place, and reports
// whether it dropped any. The other query parameters keep their order and
// spelling; a query left empty loses its "?".
func (f *Filter) Strip(u *url.URL) bool {
	if f.Empty() || u == nil {
		return false
	}
	changed := false
	if q, ok := f.stripQuery(u.RawQuery); ok {
		u.RawQuery, u.ForceQuery, changed = q, false, true
	}
	if strings.IndexByte(u.Path, ';') >= 0 || strings.IndexByte(u.RawPath, ';') >= 0 {
		if p, ok := f.stripPath(u.EscapedPath()); ok {
			if err := setEscapedPath(u, p); err == nil {
				changed = true
			}
		}
	}
	return changed
}

// StripString is Strip on a URL string: the URL without the matching
// parameters, or raw as it is when it does not parse or has none.
func (f *Filter) StripString(raw string) string {
	if f.Empty() || (strings.IndexByte(raw, '?') < 0 && strings.IndexByte(raw, ';') < 0) {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || !f.Strip(u) {
		return raw
	}
	return u.String()
}

// stripQuery drops the matching parameters of a raw query, keeping the
// others byte for byte.
func (f *Filter) stripQuery(raw string) (string, bool) {
	if raw == "" {
		return raw, false
	}
	parts := strings.Split(raw, "&")
	kept := parts[:0]
	for _, p := range parts {
		name, _, _ := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if !f.Matches(name) {
			kept = append(kept, p)
		}
	}
	if len(kept) == len(parts) {
		return raw, false
	}
	return strings.Join(kept, "&"), true
}

// stripPath drops the matching ;name=value parameters of each segment of
// an escaped path.
func (f *Filter) stripPath(escaped string) (string, bool) {
	segments := strings.Split(escaped, "/")
	changed := false
	for i, seg := range segments {
		if strings.IndexByte(seg, ';') < 0 {
			continue
		}
		params := strings.Split(seg, ";")
		kept := params[:1]
		for _, p := range params[1:] {
			name, _, _ := strings.Cut(p, "=")
			if n, err := url.PathUnescape(name); err == nil {
				name = n
			}
			if f.Matches(name) {
				changed = true
				continue
			}
			kept = append(kept, p)
		}
		segments[i] = strings.Join(kept, ";")
	}
	return strings.Join(segments, "/"), changed
}

// setEscapedPath sets u's path from an escaped one.
func setEscapedPath(u *url.URL, escaped string) error {
	p, err := url.PathUnescape(escaped)
	if err != nil {
		return err
	}
	u.Path, u.RawPath = p, ""
	if u.EscapedPath() != escaped {
		u.RawPath = escaped
	}
	return nil
}
