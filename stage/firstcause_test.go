package stage

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// refusedURL returns an http URL on loopback that refuses connections: a
// port that was listened on and closed.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// TestFailedRunNamesItsFirstCause: a run that failed because its site is
// down, refuses it or answers nothing usable says why in its detail, and
// so in its summary line, in plain words: the first cause, with the URL
// it came from, and how many start URLs failed. No Go error text.
func TestFailedRunNamesItsFirstCause(t *testing.T) {
	q := regexp.QuoteMeta
	cases := []struct {
		name string
		// setup returns the start URLs and policy entries; nil for the
		// fixture's start URL.
		setup  func(t *testing.T, f *fixture) ([]string, map[string]string)
		detail string // a regular expression the whole detail matches; START stands for the fixture's start URL
	}{
		{"every start URL refused", func(t *testing.T, f *fixture) ([]string, map[string]string) {
			u := refusedURL(t)
			return []string{u + "/", u + "/a", u + "/b"}, nil
		}, `http://127\.0\.0\.1:\d+/[ab]? refused the connection; 3 start URLs failed`},
		{"every connection reset", func(t *testing.T, f *fixture) ([]string, map[string]string) {
			f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultReset, PathPrefix: "/catalogue/"})
			return nil, nil
		}, `START reset the connection; the start URL failed`},
		{"a start URL of 8,000 bytes refused: the detail shows 256 of them", func(t *testing.T, f *fixture) ([]string, map[string]string) {
			u := refusedURL(t) + "/"
			return []string{u + strings.Repeat("x", 8000-len(u))}, nil
		}, `http://127\.0\.0\.1:\d+/x{200,240}… refused the connection; the start URL failed`},
		{"the start URL's host not found", func(t *testing.T, f *fixture) ([]string, map[string]string) {
			// A label over 63 bytes is no host name: the resolver says so
			// without asking a server.
			return []string{"http://" + strings.Repeat("a", 64) + ".example/"}, nil
		}, `http://a{64}\.example/ could not be reached: its host name was not found \(DNS lookup failed: no such host\); the start URL failed`},
		{"a timeout", func(t *testing.T, f *fixture) ([]string, map[string]string) {
			f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultHang, PathPrefix: "/catalogue/"})
			return nil, map[string]string{"timeout": `"200ms"`, "retries": "0"}
		}, `START did not answer in time \(timeout\); the start URL failed`},
		{"a certificate no one vouches for", func(t *testing.T, f *fixture) ([]string, map[string]string) {
			srv := httptest.NewUnstartedServer(f.site)
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes the crawler breaks off
			srv.StartTLS()
			t.Cleanup(srv.Close)
			return []string{srv.URL + "/catalogue/page-1.html"}, nil
		}, `https://127\.0\.0\.1:\d+/catalogue/page-1\.html failed the TLS handshake: certificate signed by unknown authority; the start URL failed`},
		{"HTTP 503", func(t *testing.T, f *fixture) ([]string, map[string]string) {
			f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 503, PathPrefix: "/catalogue/"})
			return nil, nil
		}, `START answered HTTP 503 Service Unavailable; the start URL failed`},
		{"HTTP 403", func(t *testing.T, f *fixture) ([]string, map[string]string) {
			f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 403, PathPrefix: "/catalogue/"})
			return nil, nil
		}, `START answered HTTP 403 Forbidden: the site may be refusing the crawler; the start URL failed`},
		{"a stub page", func(t *testing.T, f *fixture) ([]string, map[string]string) {
			f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStub, PathPrefix: "/catalogue/"})
			return nil, nil
		}, `START answered a stub page: HTTP 200 with a 200-byte body \(min_body_bytes 512\); the start URL failed`},
		{"a start URL the site has no page for", func(t *testing.T, f *fixture) ([]string, map[string]string) {
			return []string{f.srv.URL + "/catalogue/no-such-page.html"}, nil
		}, `http://127\.0\.0\.1:\d+/catalogue/no-such-page\.html answered HTTP 404 Not Found; the start URL failed`},
		{"a listing that yields nothing", func(t *testing.T, f *fixture) ([]string, map[string]string) {
			return []string{f.srv.URL + "/catalogue/page-2.html"}, nil
		}, `no listing page yielded an item or an item link: http://127\.0\.0\.1:\d+/catalogue/page-2\.html answered, and listing\.item_links and listing\.items found nothing on it`},
		{"one start URL refused, one that yields nothing", func(t *testing.T, f *fixture) ([]string, map[string]string) {
			return []string{refusedURL(t) + "/", f.srv.URL + "/catalogue/page-2.html"}, nil
		}, `no listing page yielded an item or an item link: http://127\.0\.0\.1:\d+/catalogue/page-2\.html answered, and listing\.item_links and listing\.items found nothing on it; ` +
			`http://127\.0\.0\.1:\d+/ refused the connection; 1 of 2 start URLs failed`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 20})
			starts, policy := tc.setup(t, f)
			detail := strings.ReplaceAll(tc.detail, "START", `http://127\.0\.0\.1:\d+`+q(catalogsite.StartURL("")))
			rep := f.run(f.config(policy, "", starts...), Options{})
			if rep.Outcome != verdict.OutcomeFailed || rep.Rule != 1 {
				t.Fatalf("verdict %s (%s, rule %d), want failed by rule 1", rep.Outcome, rep.Stop, rep.Rule)
			}
			if !regexp.MustCompile(`^` + detail + `$`).MatchString(rep.Detail) {
				t.Errorf("detail %q\nwant    %s", rep.Detail, detail)
			}
			if !strings.HasSuffix(rep.Summary(), " · "+rep.Detail) || rep.Detail == "" {
				t.Errorf("the summary line does not end with the detail: %s", rep.Summary())
			}
			for _, noise := range []string{"dial tcp", "connect:", "Get \"", "x509:", "tls:", ": lookup "} {
				if strings.Contains(rep.Detail, noise) {
					t.Errorf("detail %q holds Go error text %q", rep.Detail, noise)
				}
			}
		})
	}
}

// TestASucceedingRunKeepsAnEmptyDetail: the first cause is said only when
// a run fails; a run that succeeded with a gap (one item page answered
// 503 for good) keeps the detail empty.
func TestASucceedingRunKeepsAnEmptyDetail(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 20})
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: 503, PathPrefix: "/catalogue/item-3.html"})
	rep := f.run(f.config(nil, ""), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if rep.Detail != "" || rep.CoverageGaps != 1 {
		t.Fatalf("detail %q, %d gaps", rep.Detail, rep.CoverageGaps)
	}
}

// TestAStopRuleDetailNamesTheFirstFailureToo: a failed run that a stop
// rule ended keeps the rule's detail and adds the first failure.
func TestAStopRuleDetailNamesTheFirstFailureToo(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 40, PerPage: 40})
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if _, ok := itemID(r); ok {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		next.ServeHTTP(w, r)
	})
	rep := f.run(f.config(map[string]string{"max_consecutive_failures": "5", "retries": "0", "concurrency": "1"}, ""), Options{})
	if rep.Outcome != verdict.OutcomeFailed || rep.Stop != verdict.StopConsecutiveFailures {
		t.Fatalf("verdict %s (%s, rule %d)", rep.Outcome, rep.Stop, rep.Rule)
	}
	want := regexp.MustCompile(`^5 requests in a row failed after retries; the first failure: http://127\.0\.0\.1:\d+/catalogue/item-\d+\.html answered HTTP 502 Bad Gateway$`)
	if !want.MatchString(rep.Detail) {
		t.Fatalf("detail %q, want %s", rep.Detail, want)
	}
}
