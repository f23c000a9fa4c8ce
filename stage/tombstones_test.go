package stage

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// hostileAnswers are answers that yield nothing usable. None of them says
// that a page's items were removed, so a traversal that met one must not
// export a single "removed" row.
var hostileAnswers = map[string]http.HandlerFunc{
	"an over-size body (a gzip bomb)": func(w http.ResponseWriter, r *http.Request) {
		var zipped bytes.Buffer
		zw := gzip.NewWriter(&zipped)
		_, _ = zw.Write(make([]byte, 4<<20))
		_ = zw.Close()
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(zipped.Bytes())
	},
	"a redirect out of scope": func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.invalid/moved", http.StatusFound)
	},
	"a redirect loop": func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path, http.StatusFound)
	},
	"a 304 to a request that was not conditional": func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotModified)
	},
	"a 400": func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, strings.Repeat("bad request ", 100), http.StatusBadRequest)
	},
	"an empty 200 with min_body_bytes = 0": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
	},
	"an HTML page without the listing's or the item's markup": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body><h2>We are updating our catalogue</h2>" + strings.Repeat("<p>Come back soon.</p>", 50) + "</body></html>"))
	},
}

func TestTombstones_NoLiveItemIsRemovedAfterAPageThatYieldedNothingUsable(t *testing.T) {
	for name, answer := range hostileAnswers {
		for _, page := range []string{"/catalogue/page-2.html", "/catalogue/item-7.html"} {
			t.Run(name+" at "+page, func(t *testing.T) {
				// Without ETags the run keeps no memo, so no request is
				// conditional and a 304 says nothing about the page.
				f := newFixture(t, catalogsite.Options{Items: 40, NoETags: true})
				cfg := f.config(map[string]string{"max_body_bytes": `"1MiB"`, "min_body_bytes": "0", "retries": "0"},
					"\n[export]\ntombstones = true\n")
				rep := f.run(cfg, Options{})
				if rep.Items.New != 40 {
					t.Fatalf("first run stored %d items, want 40", rep.Items.New)
				}
				f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
					if r.URL.Path == page {
						answer(w, r)
						return
					}
					next.ServeHTTP(w, r)
				})
				rep = f.run(cfg, Options{})
				if !rep.Traversal.Started || !rep.Traversal.Completed {
					t.Fatalf("second run did not make a whole traversal: %+v", rep.Traversal)
				}
				if rep.Items.Removed != 0 || rep.Traversal.Gaps == 0 {
					t.Fatalf("removed %d live items; traversal %+v, gaps %+v", rep.Items.Removed, rep.Traversal, rep.Gaps)
				}
				if !hasGap(rep, f.srv.URL+page) {
					t.Fatalf("the gaps %+v do not name %s", rep.Gaps, page)
				}
			})
		}
	}
}

func TestTombstones_AnItemPageThatIsGoneIsRemoved(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusGone} {
		f := newFixture(t, catalogsite.Options{Items: 40})
		cfg := f.config(nil, "\n[export]\ntombstones = true\n")
		f.run(cfg, Options{})
		f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
			if r.URL.Path == "/catalogue/item-7.html" {
				http.Error(w, strings.Repeat("gone ", 200), status)
				return
			}
			next.ServeHTTP(w, r)
		})
		rep := f.run(cfg, Options{})
		expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
		if rep.Items.Removed != 1 || rep.CoverageGaps != 0 {
			t.Fatalf("HTTP %d: removed %d, gaps %+v; want the item removed and no gap", status, rep.Items.Removed, rep.Gaps)
		}
	}
}

func hasGap(rep verdict.RunReport, url string) bool {
	for _, g := range rep.Gaps {
		if g.URL == url {
			return true
		}
	}
	return false
}
