package stage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// shopToken is the secret a gated site wants: it must reach the site and
// nothing else.
const shopToken = "tok-5f1c2e9a-gated"

// gate serves the catalog only to a request carrying the consent cookie
// GET /consent sets (with a 302 to the first listing page), the cookie
// cc_consent=1, or the bearer token; anything else but robots.txt gets a
// 403. It counts the 403s.
func gate(f *fixture) *atomic.Int64 {
	var denied atomic.Int64
	f.wrap(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		consent, _ := r.Cookie("consent")
		cc, _ := r.Cookie("cc_consent")
		switch {
		case r.URL.Path == "/consent":
			http.SetCookie(w, &http.Cookie{Name: "consent", Value: "yes", Path: "/"})
			http.Redirect(w, r, "/catalogue/page-1.html", http.StatusFound)
		case r.URL.Path == "/robots.txt",
			consent != nil && consent.Value == "yes",
			cc != nil && cc.Value == "1",
			r.Header.Get("Authorization") == "Bearer "+shopToken:
			next.ServeHTTP(w, r)
		default:
			denied.Add(1)
			http.Error(w, "consent or a token is required", http.StatusForbidden)
		}
	})
	return &denied
}

// TestGatedSiteConsentRedirect: a run started at the consent URL keeps
// the cookie its 302 sets and crawls the whole catalog with it; without
// the cookie jar every page is refused and the run fails.
func TestGatedSiteConsentRedirect(t *testing.T) {
	for _, jar := range []bool{true, false} {
		t.Run(fmt.Sprintf("cookie_jar=%v", jar), func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 30, PerPage: 10})
			denied := gate(f)
			cfg := f.config(nil, fmt.Sprintf("\n[request]\ncookie_jar = %v\n", jar), f.srv.URL+"/consent")
			rep := f.run(cfg, Options{})
			if !jar {
				if rep.Outcome != verdict.OutcomeFailed || denied.Load() == 0 {
					t.Fatalf("without the jar: %s, %d refused; want failed on 403s", rep.Summary(), denied.Load())
				}
				return
			}
			expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
			if n := denied.Load(); n != 0 {
				t.Fatalf("%d requests refused with the consent cookie in the jar", n)
			}
			assertItemsMatchSite(t, f, 30)
		})
	}
}

// TestGatedSiteConfiguredCookie: a consent cookie written in the config
// opens the site from the first request.
func TestGatedSiteConfiguredCookie(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30, PerPage: 10})
	denied := gate(f)
	rep := f.run(f.config(nil, "\n[request]\ncookies = { cc_consent = \"1\" }\ncookie_jar = false\n"), Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if n := denied.Load(); n != 0 {
		t.Fatalf("%d requests refused with the configured cookie", n)
	}
	assertItemsMatchSite(t, f, 30)
}

// TestGatedSiteTokenFromEnvironment: an Authorization header read from
// the environment opens the site, for run and for check, and the token
// shows nowhere: not in the report, its JSON, the debug log, check's
// report, or any file the run wrote (state, .last_run.json, the export
// and its verdicts). A wrong token is refused.
func TestGatedSiteTokenFromEnvironment(t *testing.T) {
	const extra = "\n[request]\nheaders = { Authorization = \"Bearer ${SHOP_TOKEN}\" }\n"
	t.Run("wrong token", func(t *testing.T) {
		t.Setenv("SHOP_TOKEN", "not-the-token")
		f := newFixture(t, catalogsite.Options{Items: 30, PerPage: 10})
		denied := gate(f)
		if rep := f.run(f.config(nil, extra), Options{}); rep.Outcome != verdict.OutcomeFailed || denied.Load() == 0 {
			t.Fatalf("a wrong token: %s, %d refused; want failed on 403s", rep.Summary(), denied.Load())
		}
	})
	t.Setenv("SHOP_TOKEN", shopToken)
	f := newFixture(t, catalogsite.Options{Items: 30, PerPage: 10})
	denied := gate(f)
	cfg := f.config(nil, extra)
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	log.Debug("config", "config", cfg)
	rep := f.run(cfg, Options{Logger: log})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	if n := denied.Load(); n != 0 {
		t.Fatalf("%d requests refused with the token", n)
	}
	assertItemsMatchSite(t, f, 30)
	check, err := Check(context.Background(), cfg, Options{Logger: log}, "")
	if err != nil || check.Item == nil || len(check.Item.Items) != 1 {
		t.Fatalf("check through the gate: %+v (%v)", check, err)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	printed := map[string]string{
		"the report": fmt.Sprintf("%+v", rep), "its JSON": string(js), "the debug log": logs.String(),
		"check's report": fmt.Sprintf("%+v", check), "the config": fmt.Sprintf("%+v %#v", cfg, cfg),
	}
	if !bytes.Contains(logs.Bytes(), []byte(`"msg":"run finished"`)) {
		t.Fatalf("the debug log lacks the run's lines: nothing was checked\n%s", logs.String())
	}
	files := 0
	err = filepath.WalkDir(f.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		printed[path] = string(b)
		files++
		return err
	})
	if err != nil || files < 5 {
		t.Fatalf("read %d files the run wrote: %v", files, err)
	}
	for what, s := range printed {
		if bytes.Contains([]byte(s), []byte(shopToken)) {
			t.Errorf("the token shows in %s", what)
		}
	}
}
