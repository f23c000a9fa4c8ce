package verdict

import (
	"fmt"
	"strconv"
	"strings"
)

// The reasons a fetch that produced no response gives for its URL (a
// coverage gap's reason); CauseText says each in a sentence. A DNS, TLS
// or other connection failure adds its cause after the reason and a
// colon, such as "TLS handshake failed: certificate signed by unknown
// authority".
const (
	ReasonRefused    = "connection refused"
	ReasonReset      = "connection reset"
	ReasonTimeout    = "timeout"
	ReasonTruncated  = "truncated body"
	ReasonDNS        = "DNS lookup failed"
	ReasonTLS        = "TLS handshake failed"
	ReasonConnection = "connection error"
)

// CauseText says in plain words what happened at a URL, from its gap:
// "http://shop.example/ refused the connection", "http://shop.example/p/1
// answered HTTP 503 Service Unavailable".
func CauseText(g Gap) string {
	u, r := g.URL, g.Reason
	after := func(prefix string) (string, bool) {
		if r == prefix {
			return "", true
		}
		rest, ok := strings.CutPrefix(r, prefix+": ")
		return rest, ok
	}
	switch {
	case r == ReasonRefused:
		return u + " refused the connection"
	case r == ReasonReset:
		return u + " reset the connection"
	case r == ReasonTimeout:
		return u + " did not answer in time (timeout)"
	case r == ReasonTruncated:
		return u + " broke off its answer (truncated body)"
	}
	if _, ok := after(ReasonDNS); ok {
		return u + " could not be reached: its host name was not found (" + r + ")"
	}
	if rest, ok := after(ReasonTLS); ok && rest != "" {
		return u + " failed the TLS handshake: " + rest
	}
	if rest, ok := after(ReasonConnection); ok && rest != "" {
		return u + " could not be reached: " + rest
	}
	if status, ok := httpStatus(r); ok {
		s := fmt.Sprintf("%s answered HTTP %d", u, status)
		if text := statusText[status]; text != "" {
			s += " " + text
		}
		switch status {
		case 403:
			s += ": the site may be refusing the crawler"
		case 429:
			s += ": the site asks the crawler to slow down"
		}
		return s
	}
	if strings.HasPrefix(r, "HTTP 2") && strings.Contains(r, "(min_body_bytes ") {
		return u + " answered a stub page: " + r
	}
	return u + ": " + r
}

// statusText names the statuses a crawl meets most (net/http's names;
// the verdict package does no I/O and imports no network package).
var statusText = map[int]string{
	400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
	408: "Request Timeout", 410: "Gone", 416: "Range Not Satisfiable", 429: "Too Many Requests", 451: "Unavailable For Legal Reasons",
	500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
	520: "Web Server Returned an Unknown Error", 521: "Web Server Is Down", 522: "Connection Timed Out", 523: "Origin Is Unreachable",
	524: "A Timeout Occurred",
}

// httpStatus reads a reason that is an HTTP status alone, "HTTP 503".
func httpStatus(reason string) (int, bool) {
	digits, ok := strings.CutPrefix(reason, "HTTP ")
	if !ok || len(digits) != 3 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// FailedDetail is the detail of a run whose outcome is failed: the
// crawl's detail (a stop rule's, "Deadline reached", or none when the run
// emptied its queue) with what the run met first, so a site that is down
// says so, in the verdict and at the end of the summary line:
//
//	http://shop.example/ refused the connection; 3 start URLs failed
//	no listing page yielded an item or an item link: http://shop.example/ answered, and ... found nothing on it
//	25 requests in a row failed after retries; the first failure: http://shop.example/p/9 answered HTTP 503 Service Unavailable
//
// A blocked run or one that raised an error keeps its detail: it is the
// cause.
func FailedDetail(detail string, f Facts) string {
	if f.Stop == StopBlocked || f.Stop == StopError {
		return detail
	}
	var parts []string
	if f.FetchedStartURL && !f.ListingYielded && f.EmptyListing != "" {
		parts = append(parts, "no listing page yielded an item or an item link: "+f.EmptyListing+
			" answered, and listing.item_links and listing.items found nothing on it")
	}
	if f.FirstCause.URL != "" {
		cause := CauseText(f.FirstCause)
		if detail != "" && len(parts) == 0 {
			cause = "the first failure: " + cause
		}
		parts = append(parts, cause)
	}
	switch n, failed := f.StartURLs, f.StartURLsFailed; {
	case failed == 0:
	case n == 1 && failed == 1:
		parts = append(parts, "the start URL failed")
	case failed == n:
		parts = append(parts, fmt.Sprintf("%d start URLs failed", n))
	default:
		parts = append(parts, fmt.Sprintf("%d of %d start URLs failed", failed, n))
	}
	if len(parts) == 0 {
		return detail
	}
	if detail != "" {
		parts = append([]string{detail}, parts...)
	}
	return strings.Join(parts, "; ")
}
