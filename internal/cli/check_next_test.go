package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/shopsites"
)

func TestCheckShowsThePagesChainsNextPageAndListTypes(t *testing.T) {
	path, _, base := shopConfig(t, shopsites.Params)
	res := runMain(t, "check", path)
	if res.code != ExitOK || !strings.Contains(res.stdout, "next pages: 1 ("+base+"/search?page=2)") {
		t.Fatalf("check: exit %d; want the chain's next page:\n%s", res.code, res.stdout)
	}
	if !strings.Contains(res.stdout, "tags         list of string") {
		t.Fatalf("check does not label the list field:\n%s", res.stdout)
	}
}

// postShop answers POST /api with a JSON listing whose next page is a
// cursor in the body, and GET /p/1 with a page whose title holds a
// backslash.
func postShop(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api":
			body, _ := io.ReadAll(r.Body)
			if r.Method != http.MethodPost || !json.Valid(body) {
				http.Error(w, "POST a JSON body", http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"data": {"items": [{"url": "/p/1"}], "next": "c10"}}`)
		case "/p/1":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><body><h1>C:\temp\new &amp; old</h1>%s</body></html>`, strings.Repeat("<p>x</p>", 80))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestCheckShowsAListingRequestsMethodBodyAndCursor(t *testing.T) {
	base := postShop(t)
	path := filepath.Join(t.TempDir(), "shop.toml")
	cfg := fmt.Sprintf(`name = "shop"
start_urls = ["%s/api"]

[listing]
format = "json"
item_links = "data.items[].url"
next_page = { json = "data.next", body = "variables.after" }

[listing.request]
method = "POST"
body = '{"query": "q($$after: String)", "token": "${CHECK_SECRET}", "variables": {"after": null}}'

[item.fields]
title = { css = "h1" }
`, base)
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CHECK_SECRET", "hunter2")
	res := runMain(t, "check", path)
	for _, want := range []string{
		`requested with POST, the body as written: {"query": "q($$after: String)", "token": "${CHECK_SECRET}", "variables": {"after": null}}`,
		`next pages: 1 (POST ` + base + `/api, the body's cursor "c10")`,
		`title        string    "C:\temp\new & old"`,
	} {
		if !strings.Contains(res.stdout, want) {
			t.Fatalf("check does not show %q:\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout+res.stderr, "hunter2") {
		t.Fatalf("check shows the secret:\n%s", res.stdout)
	}
}
