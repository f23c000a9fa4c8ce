package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/sink/sinktest"
	"github.com/databrew/databrew-stage/verdict"
)

// cardSite serves a listing of n item cards on its first page, whose
// next page never answers: a crawl of it always outlasts its deadline,
// having stored n items in its first two requests.
func cardSite(t *testing.T, n int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/list/1":
			var b strings.Builder
			b.WriteString("<html><body>\n")
			for i := range n {
				fmt.Fprintf(&b, "<article class=\"card\"><h3>Item %d</h3><span class=\"sku\">sku-%05d</span></article>\n", i, i)
			}
			b.WriteString("<a class=\"next\" href=\"/list/2\">next</a></body></html>\n")
			_, _ = w.Write([]byte(b.String()))
		case "/list/2":
			<-r.Context().Done() // the deadline cancels it
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// cardConfig writes a config reading the items of cardSite's cards.
func cardConfig(t *testing.T, dir, name, start string) string {
	t.Helper()
	toml := fmt.Sprintf(`name = %q
start_urls = [%q]
storage = "state/%s"
output = "out/%s"

[policy]
timeout = "30s"
backoff = "1ms"
max_backoff = "5ms"
retry_pass_delay = "10ms"
pause = "0s"

[listing]
items = "article.card"
next_page = "a.next"

[item]
key = "sku"

[item.fields]
sku = { css = "span.sku", required = true }
title = { css = "h3" }
`, name, start, name, name)
	path := filepath.Join(dir, name+".toml")
	if err := os.WriteFile(path, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRun_TheDeadlineStopsTheCrawlAndTheExportFollows: a crawl that
// always outlasts its deadline, having stored more rows than the export
// writes between two looks at its context (1,024), still publishes what
// it stored: --deadline bounds the crawl, and the export that follows has
// its own time. The run is interrupted ("Deadline reached") and partial,
// and every stored item is in the published part file once.
func TestRun_TheDeadlineStopsTheCrawlAndTheExportFollows(t *testing.T) {
	const items = 1500
	dir := t.TempDir()
	srv := cardSite(t, items)
	cfg := cardConfig(t, dir, "cards", srv.URL+"/list/1")

	r := runMain(t, "run", "--json", "--deadline", "3s", cfg)
	rep := verdictLines(t, "run --json", r.stdout, 1)[0]
	if rep.Stop != verdict.StopInterrupted || rep.Detail != "Deadline reached" || rep.Outcome != verdict.OutcomePartial {
		t.Fatalf("verdict = %s (%s): %q", rep.Outcome, rep.Stop, rep.Detail)
	}
	if rep.Items.New != items {
		t.Fatalf("the crawl stored %d items before its deadline, want %d", rep.Items.New, items)
	}
	if !rep.Export.Published || rep.Export.Failed || rep.Export.Rows != items {
		t.Fatalf("export = %+v, want %d rows published", rep.Export, items)
	}
	if r.code != ExitOK {
		t.Fatalf("exit %d, want 0 (partial)", r.code)
	}
	seen := map[string]int{}
	for _, name := range rep.Export.Files {
		rb := sinktest.ReadParquet(t, filepath.Join(rep.Export.Path, name))
		key := slices.IndexFunc(rb.Columns, func(c sinktest.Column) bool { return c.Name == "_key" })
		for _, row := range rb.Rows {
			seen[fmt.Sprint(row[key])]++
		}
	}
	if len(seen) != items {
		t.Fatalf("the part files hold %d keys, want %d", len(seen), items)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("key %s published %d times", k, n)
		}
	}
}
