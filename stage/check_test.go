package stage

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// checkAnswers are answers an item page may give, beyond hostileAnswers:
// the ones check used to judge differently from run.
var checkAnswers = map[string]http.HandlerFunc{
	"a JSON answer": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name": "x", "pad": %q}`, strings.Repeat("x", 600))
	},
	"a 200-byte stub": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>" + strings.Repeat(".", 170) + "</body></html>"))
	},
	"a 403": func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, strings.Repeat("forbidden ", 100), http.StatusForbidden)
	},
	"a 404": func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, strings.Repeat("not found ", 100), http.StatusNotFound)
	},
	"a ban page a [block] rule names": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body><h1>Access denied</h1>" + strings.Repeat("<p>sorry</p>", 60) + "</body></html>"))
	},
}

// TestCheckJudgesEveryPageAsRunDoes visits one fault-injected item page
// with check and crawls it with a run (a listing linking only it), and
// compares what the two made of it.
func TestCheckJudgesEveryPageAsRunDoes(t *testing.T) {
	answers := map[string]http.HandlerFunc{"a good page": nil, "a page robots.txt disallows": nil}
	for name, a := range hostileAnswers {
		answers[name] = a
	}
	for name, a := range checkAnswers {
		answers[name] = a
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 5})
			const page = "/catalogue/item-3.html"
			if name == "a page robots.txt disallows" {
				f.site.SetRobots("User-agent: *\nDisallow: " + page + "\n")
			}
			listing := bigListing(0)
			listing = []byte(strings.Replace(string(listing), "</body>", `<article class="product_pod"><h3><a href="item-3.html">3</a></h3></article>`+strings.Repeat("<p>more to come</p>", 40)+`</body>`, 1))
			f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
				switch {
				case r.URL.Path == "/catalogue/only.html":
					w.Header().Set("Content-Type", "text/html")
					_, _ = w.Write(listing)
				case r.URL.Path == page && answer != nil:
					answer(w, r)
				default:
					next.ServeHTTP(w, r)
				}
			})
			cfg := f.config(map[string]string{"retries": "0", "max_body_bytes": `"1MiB"`, "min_body_bytes": "512"},
				"\n[block]\ntexts = [\"Access denied\"]\n", f.srv.URL+"/catalogue/only.html")
			chk, err := Check(t.Context(), cfg, Options{}, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(chk.Listings) != 1 || chk.Listings[0].Class != verdict.ClassOK || chk.Item == nil {
				t.Fatalf("check's listings = %+v, item %v", chk.Listings, chk.Item)
			}
			in := *chk.Item
			rep := f.run(cfg, Options{})
			itemURL := f.srv.URL + page
			var runGap *verdict.Gap
			for i := range rep.Gaps {
				if strings.HasPrefix(rep.Gaps[i].Reason, in.Reason) || rep.Gaps[i].URL == itemURL || rep.Gaps[i].URL == in.AnsweredBy {
					runGap = &rep.Gaps[i]
				}
			}
			switch {
			case in.Blocked != "":
				if rep.Stop != verdict.StopBlocked || rep.Detail != in.Blocked {
					t.Fatalf("check: blocked %q; run: %s %q", in.Blocked, rep.Stop, rep.Detail)
				}
			case in.Class == verdict.ClassOK:
				if rep.Items.New != 1 || runGap != nil {
					t.Fatalf("check: ok; run: items %+v, gaps %+v", rep.Items, rep.Gaps)
				}
			case in.Class == verdict.ClassFailure, in.Gap:
				if runGap == nil || runGap.Reason != in.Reason && !strings.HasPrefix(runGap.Reason, in.Reason+" (redirected") {
					t.Fatalf("check: %s %q (gap %v); run's gaps: %+v", in.Class, in.Reason, in.Gap, rep.Gaps)
				}
			default: // neutral without a gap: the site says the item is gone
				if runGap != nil || rep.Requests.Neutral != 1 {
					t.Fatalf("check: %s %q, no gap; run: %+v, gaps %+v", in.Class, in.Reason, rep.Requests, rep.Gaps)
				}
			}
			if in.Class == verdict.ClassFailure && rep.Requests.Failed == 0 {
				t.Fatalf("check: a failure; run counted none: %+v", rep.Requests)
			}
			if in.Kind != crawl.KindItem {
				t.Fatalf("check visited the item as %s", in.Kind)
			}
		})
	}
}
