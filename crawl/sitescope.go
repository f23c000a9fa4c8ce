package crawl

import (
	"strings"
	"sync"
)

// siteScope answers, for the links a memo remembers, what Normalize and
// Scope.Allows would: the scope goes by host alone, and a remembered link
// was normalized when its page was read, so a link that names its site
// plainly (scheme and host, no user) is answered once per site. An
// unchanged rerun replays thousands of links, each of which would be
// parsed again. The zero value is ready; it is safe for concurrent use.
type siteScope struct {
	mu    sync.Mutex
	sites map[string]bool
}

// allows reports whether link is a URL Normalize accepts and scope allows.
func (s *siteScope) allows(scope Scope, link string) bool {
	site, ok := siteOf(link)
	if !ok {
		_, u, ok := Normalize(link)
		return ok && scope.Allows(u)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, known := s.sites[site]
	if !known {
		_, u, ok := Normalize(site + "/")
		in = ok && scope.Allows(u)
		if s.sites == nil {
			s.sites = map[string]bool{}
		}
		s.sites[strings.Clone(site)] = in
	}
	return in
}

// siteOf returns the scheme and host (with its port) of an absolute http
// or https URL in lower case whose host is a plain name or address; ok is
// false for any other link, which is then parsed whole.
func siteOf(link string) (site string, ok bool) {
	rest, found := strings.CutPrefix(link, "https://")
	if !found {
		if rest, found = strings.CutPrefix(link, "http://"); !found {
			return "", false
		}
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host := rest[:end]
	if host == "" {
		return "", false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == ':') {
			return "", false // upper case, a user, an IPv6 literal, an escape
		}
	}
	if !parsesWhole(rest[end:]) {
		return "", false
	}
	return link[:len(link)-len(rest)+end], true
}

// parsesWhole reports whether the part of a URL after its host holds
// nothing url.Parse refuses there: a control character, or a % that does
// not start an escape.
func parsesWhole(tail string) bool {
	for i := 0; i < len(tail); i++ {
		switch c := tail[i]; {
		case c < ' ' || c == 0x7f:
			return false
		case c == '%':
			if i+2 >= len(tail) || !isHex(tail[i+1]) || !isHex(tail[i+2]) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
