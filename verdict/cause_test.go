package verdict

import "testing"

// TestCauseTextSaysEachReasonInPlainWords: every reason a fetch or a
// status gives is said as what the URL did.
func TestCauseTextSaysEachReasonInPlainWords(t *testing.T) {
	const u = "http://shop.example/"
	for reason, want := range map[string]string{
		ReasonRefused:                u + " refused the connection",
		ReasonReset:                  u + " reset the connection",
		ReasonTimeout:                u + " did not answer in time (timeout)",
		ReasonTruncated:              u + " broke off its answer (truncated body)",
		ReasonDNS + ": no such host": u + " could not be reached: its host name was not found (DNS lookup failed: no such host)",
		ReasonTLS + ": certificate signed by unknown authority": u + " failed the TLS handshake: certificate signed by unknown authority",
		ReasonConnection + ": network is unreachable":           u + " could not be reached: network is unreachable",
		ReasonConnection: u + ": connection error",
		"HTTP 503":       u + " answered HTTP 503 Service Unavailable",
		"HTTP 403":       u + " answered HTTP 403 Forbidden: the site may be refusing the crawler",
		"HTTP 429":       u + " answered HTTP 429 Too Many Requests: the site asks the crawler to slow down",
		"HTTP 599":       u + " answered HTTP 599",
		"HTTP 200 with a 180-byte body (min_body_bytes 512)":      u + " answered a stub page: HTTP 200 with a 180-byte body (min_body_bytes 512)",
		"HTTP 200 with a body that is not JSON (text/html): oops": u + ": HTTP 200 with a body that is not JSON (text/html): oops",
	} {
		if got := CauseText(Gap{URL: u, Reason: reason}); got != want {
			t.Errorf("%q: %q, want %q", reason, got, want)
		}
	}
}

// TestFailedDetail: what a failed run's detail says, from its facts.
func TestFailedDetail(t *testing.T) {
	refused := Gap{URL: "http://shop.example/", Reason: ReasonRefused}
	for _, tt := range []struct {
		name, detail string
		f            Facts
		want         string
	}{
		{"all start URLs down", "", Facts{Stop: StopQueueEmpty, FirstCause: refused, StartURLs: 3, StartURLsFailed: 3},
			"http://shop.example/ refused the connection; 3 start URLs failed"},
		{"the one start URL down", "", Facts{Stop: StopQueueEmpty, FirstCause: refused, StartURLs: 1, StartURLsFailed: 1},
			"http://shop.example/ refused the connection; the start URL failed"},
		{"some start URLs down", "", Facts{Stop: StopQueueEmpty, FirstCause: refused, StartURLs: 3, StartURLsFailed: 1},
			"http://shop.example/ refused the connection; 1 of 3 start URLs failed"},
		{"a deadline", "Deadline reached", Facts{Stop: StopInterrupted, FirstCause: refused, StartURLs: 1, StartURLsFailed: 1},
			"Deadline reached; the first failure: http://shop.example/ refused the connection; the start URL failed"},
		{"an empty listing", "", Facts{Stop: StopQueueEmpty, FetchedStartURL: true, EmptyListing: "http://shop.example/"},
			"no listing page yielded an item or an item link: http://shop.example/ answered, and listing.item_links and listing.items found nothing on it"},
		{"blocked keeps its detail", "captcha", Facts{Stop: StopBlocked, FirstCause: refused}, "captcha"},
		{"an error keeps its detail", "disk full", Facts{Stop: StopError, FirstCause: refused}, "disk full"},
		{"nothing to add", "Deadline reached", Facts{Stop: StopInterrupted}, "Deadline reached"},
	} {
		if got := FailedDetail(tt.detail, tt.f); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
