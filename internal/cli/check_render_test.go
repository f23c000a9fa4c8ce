package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/browsertest"
	"github.com/databrew/databrew-stage/internal/testkit/shopsites"
	"github.com/databrew/databrew-stage/render"
)

// TestCheckRendersAndSaysSo: check on s17 loads its listing and product
// pages in the browser as a run does, shows the product a script built,
// and says which pages it rendered and what the browser blocked.
func TestCheckRendersAndSaysSo(t *testing.T) {
	_, err := render.Find(nil, nil)
	browsertest.Need(t, err)
	path, shop, base := shopConfig(t, shopsites.Rendered)
	patient(t, path)
	first := shop.Truth(base)[0]
	res := runMain(t, "check", path)
	if res.code != ExitOK {
		t.Fatalf("exit %d:\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"rendered in headless Chromium: the DOM read once wait_for \"ul.grid\" matched",
		"rendered in headless Chromium: the DOM read once wait_for \"div.pdp h1\" matched",
		"item links: 6",
		"key " + first.Key,
		"\"" + first.Values["name"].(string) + "\"",
		"render: 2 pages rendered in ",
		"(listing pages (wait_for \"ul.grid\"), item pages (wait_for \"div.pdp h1\"))",
		"by resource type",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("check does not say %q:\n%s", want, res.stdout)
		}
	}
}

// TestRunWithoutBrowserIsAConfigError: with [render] and no browser to
// find, or one that does not start, run and check exit 2 before any
// request, naming the [render] table and what was looked for or what the
// browser said.
func TestRunWithoutBrowserIsAConfigError(t *testing.T) {
	path, shop, _ := shopConfig(t, shopsites.Rendered)
	for _, cmd := range []string{"run", "check"} {
		t.Setenv(render.BrowserEnv, "/nowhere/chromium")
		res := runMain(t, cmd, path)
		if res.code != ExitUsage || !strings.Contains(res.stderr, "shop.toml:") ||
			!strings.Contains(res.stderr, ": render: no browser found: CHROMIUM=/nowhere/chromium: no such file or directory") {
			t.Fatalf("%s: exit %d, stderr %q; want 2 and the [render] table's line", cmd, res.code, res.stderr)
		}
	}
	if n := shop.Requests() + shop.RobotsRequests(); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// TestRunJSONHasRenderFacts: the --json verdict, .last_run.json and
// report --json of a rendered run match the schemas with
// requests.subresources and the render facts.
func TestRunJSONHasRenderFacts(t *testing.T) {
	_, err := render.Find(nil, nil)
	browsertest.Need(t, err)
	shop, err := shopsites.New(shopsites.Rendered, shopsites.Options{Products: 2, PerPage: 2})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(shop)
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "shop.toml")
	if err := os.WriteFile(path, []byte(shop.Config(srv.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	patient(t, path)
	res := runMain(t, "run", "--json", path)
	if res.code != ExitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	rep := verdictLines(t, "run --json", res.stdout, 1)[0]
	if rep.Requests.Total != 3 || rep.Requests.Subresources < 6 || rep.Render == nil || rep.Render.Rendered != 3 ||
		rep.Render.Pages != "all" || rep.Render.Blocked.Robots != 3 {
		t.Fatalf("requests %+v, render %+v", rep.Requests, rep.Render)
	}
	if !strings.Contains(res.stdout, `"subresources":`) || !strings.Contains(res.stdout, `"render":{"pages":"all","browser":"`) {
		t.Fatalf("the JSON lacks requests.subresources or render: %s", res.stdout)
	}
	last := lastRun(t, filepath.Join(filepath.Dir(path), "state"))
	if last.Render == nil || last.Render.Rendered != 3 {
		t.Fatalf(".last_run.json render %+v", last.Render)
	}
	reportLines(t, runMain(t, "report", "--json", path).stdout, 1)
}

// patient gives the pages of the shop config at path 30s to render
// instead of 5s: on a loaded machine a page that times out is retried,
// and the counts the tests check would hold the retry.
func patient(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "\ntimeout = \"5s\"\n", "\ntimeout = \"30s\"\n", 1)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
