package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// runMainEnv is runMain with these environment variables (and no others).
func runMainEnv(t *testing.T, vars map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return vars[k] }}
	code := Main(args, env)
	t.Logf("%v databrew-stage %s: exit %d\nstdout:\n%sstderr:\n%s", vars, strings.Join(args, " "), code, stdout.String(), stderr.String())
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// lineageEndpoint is an OpenLineage server on loopback that keeps every
// request and answers with status (201 when 0).
type lineageEndpoint struct {
	mu       sync.Mutex
	requests []*http.Request
	bodies   [][]byte
	status   int
}

func (e *lineageEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.requests = append(e.requests, r)
	e.bodies = append(e.bodies, body)
	if e.status != 0 {
		http.Error(w, "lineage store unavailable", e.status)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

// event decodes one event and reads a field by a path of keys and indexes.
type event map[string]any

func decodeEvent(t *testing.T, b []byte) event {
	t.Helper()
	var e event
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("not a JSON event: %v\n%s", err, b)
	}
	return e
}

func (e event) get(path ...any) any {
	var v any = map[string]any(e)
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// TestRun_LineageOverHTTP: with OPENLINEAGE_URL, each run posts START and
// then COMPLETE as JSON to /api/v1/lineage, with the API key, the job in
// OPENLINEAGE_NAMESPACE named for the config, and the export root as the
// output dataset.
func TestRun_LineageOverHTTP(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30, PerPage: 10})
	books := f.config("books", "", nil)
	ep := &lineageEndpoint{}
	srv := httptest.NewServer(ep)
	defer srv.Close()
	vars := map[string]string{"OPENLINEAGE_URL": srv.URL, "OPENLINEAGE_NAMESPACE": "crawlers", "OPENLINEAGE_API_KEY": "k3y"}
	r := runMainEnv(t, vars, "run", books)
	if r.code != ExitOK || strings.Contains(r.stderr, "openlineage") {
		t.Fatalf("exit %d, stderr %q; want 0 and no word of lineage", r.code, r.stderr)
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if len(ep.requests) != 2 {
		t.Fatalf("%d requests, want START and COMPLETE", len(ep.requests))
	}
	var runID any
	for i, want := range []string{"START", "COMPLETE"} {
		req := ep.requests[i]
		if req.Method != http.MethodPost || req.URL.Path != "/api/v1/lineage" ||
			req.Header.Get("Content-Type") != "application/json" || req.Header.Get("Authorization") != "Bearer k3y" {
			t.Errorf("request %d: %s %s, Content-Type %q, Authorization %q", i, req.Method, req.URL.Path,
				req.Header.Get("Content-Type"), req.Header.Get("Authorization"))
		}
		ev := decodeEvent(t, ep.bodies[i])
		if i == 0 {
			runID = ev.get("run", "runId")
		}
		for _, c := range []struct {
			path []any
			want any
		}{
			{[]any{"eventType"}, want},
			{[]any{"run", "runId"}, runID},
			{[]any{"job", "namespace"}, "crawlers"},
			{[]any{"job", "name"}, "books"},
			{[]any{"outputs", 0, "namespace"}, "file"},
			{[]any{"outputs", 0, "name"}, filepath.Join(f.dir, "out", "books")},
			{[]any{"outputs", 0, "facets", "schema", "fields", 0, "name"}, "title"},
		} {
			if got := ev.get(c.path...); got != c.want {
				t.Errorf("%s event: %v = %v, want %v", want, c.path, got, c.want)
			}
		}
	}
	complete := decodeEvent(t, ep.bodies[1])
	if got := complete.get("outputs", 0, "outputFacets", "outputStatistics", "rowCount"); got != float64(30) {
		t.Errorf("rowCount %v, want 30", got)
	}
	if got, ok := complete.get("outputs", 0, "outputFacets", "outputStatistics", "size").(float64); !ok || got <= 0 {
		t.Errorf("size %v, want the bytes of the part files", got)
	}
}

// TestRun_LineageEndpointFailing: an endpoint that is down or answers 500
// never fails the run; each event it missed is a warning, and a line after
// the run's summary counts them.
func TestRun_LineageEndpointFailing(t *testing.T) {
	down := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String()
		_ = ln.Close()
		return url
	}
	failing := func(t *testing.T) string {
		srv := httptest.NewServer(&lineageEndpoint{status: http.StatusInternalServerError})
		t.Cleanup(srv.Close)
		return srv.URL
	}
	for name, endpoint := range map[string]func(*testing.T) string{"down": down, "500": failing} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 30, PerPage: 10})
			books := f.config("books", "", nil)
			url := endpoint(t)
			r := runMainEnv(t, map[string]string{"OPENLINEAGE_URL": url}, "run", "--json", books)
			if r.code != ExitOK || !strings.Contains(r.stdout, `"outcome":"success"`) {
				t.Fatalf("exit %d, stdout %q; want a successful run", r.code, r.stdout)
			}
			if n := strings.Count(r.stderr, "openlineage event not delivered"); n != 2 {
				t.Errorf("%d warnings, want one per event", n)
			}
			want := "databrew-stage run: openlineage: 2 of 2 events for books not delivered to " + url + "/api/v1/lineage: "
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q", want)
			}
			summary := strings.Index(r.stderr, "books: success")
			if count := strings.Index(r.stderr, want); summary < 0 || count < summary {
				t.Errorf("the count does not follow the summary line")
			}
		})
	}
}

// lineageLines returns the events in a --lineage-file.
func lineageLines(t *testing.T, path string) []event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []event
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		if !strings.HasSuffix(line, "\n") {
			t.Fatalf("the file ends in a partial line %q", line)
		}
		out = append(out, decodeEvent(t, []byte(line)))
	}
	return out
}

// TestRun_LineageFile: --lineage-file appends a START and a COMPLETE line
// per run; two runs make two pairs, each pair with its own run id, and the
// second run (nothing new) publishes nothing, so it has no statistics.
func TestRun_LineageFile(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30, PerPage: 10})
	books := f.config("books", "", nil)
	path := filepath.Join(f.dir, "lineage.jsonl")
	for range 2 {
		if r := runMain(t, "run", "--lineage-file", path, books); r.code != ExitOK || strings.Contains(r.stderr, "openlineage") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	}
	events := lineageLines(t, path)
	if len(events) != 4 {
		t.Fatalf("%d events, want 4", len(events))
	}
	for i, want := range []string{"START", "COMPLETE", "START", "COMPLETE"} {
		if got := events[i].get("eventType"); got != want {
			t.Errorf("event %d is %v, want %s", i, got, want)
		}
	}
	if events[0].get("run", "runId") != events[1].get("run", "runId") || events[2].get("run", "runId") != events[3].get("run", "runId") ||
		events[0].get("run", "runId") == events[2].get("run", "runId") {
		t.Errorf("run ids %v %v %v %v: want one per run", events[0].get("run", "runId"), events[1].get("run", "runId"),
			events[2].get("run", "runId"), events[3].get("run", "runId"))
	}
	if events[1].get("outputs", 0, "outputFacets", "outputStatistics", "rowCount") != float64(30) {
		t.Errorf("first COMPLETE: %v", events[1].get("outputs", 0, "outputFacets"))
	}
	if got := events[3].get("outputs", 0, "outputFacets", "outputStatistics"); got != nil {
		t.Errorf("second COMPLETE has statistics %v, want none: nothing was published", got)
	}
}

// TestRun_LineageFileFailedRun: a failed run ends with FAIL and the
// errorMessage facet, whose message is the summary line.
func TestRun_LineageFileFailedRun(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30, PerPage: 10})
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, PathPrefix: "/catalogue/page-1.html"})
	books := f.config("books", "", nil)
	path := filepath.Join(f.dir, "lineage.jsonl")
	r := runMain(t, "run", "--lineage-file", path, books)
	if r.code != ExitFailed {
		t.Fatalf("exit %d, want %d", r.code, ExitFailed)
	}
	events := lineageLines(t, path)
	if len(events) != 2 || events[1].get("eventType") != "FAIL" {
		t.Fatalf("events %v, want START and FAIL", events)
	}
	summary := strings.SplitN(r.stderr, "\n", 2)[0]
	if got := events[1].get("run", "facets", "errorMessage", "message"); got != summary {
		t.Errorf("message %q, want the summary line %q", got, summary)
	}
	if got := events[1].get("run", "facets", "errorMessage", "programmingLanguage"); got != "go" {
		t.Errorf("programmingLanguage %v", got)
	}
}

// TestRun_LineageFileUnwritable: a --lineage-file that cannot be written
// does not fail the run; stderr names the file.
func TestRun_LineageFileUnwritable(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30, PerPage: 10})
	books := f.config("books", "", nil)
	path := filepath.Join(f.dir, "no-such-folder", "lineage.jsonl")
	r := runMain(t, "run", "--lineage-file", path, books)
	if r.code != ExitOK {
		t.Fatalf("exit %d, want 0", r.code)
	}
	want := "databrew-stage run: openlineage: 2 of 2 events for books not delivered to --lineage-file " + path + ": "
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q", want)
	}
}

// TestRun_LineageBadURL: an OPENLINEAGE_URL that is not an http(s) URL is
// reported once and the runs go on, still writing --lineage-file.
func TestRun_LineageBadURL(t *testing.T) {
	f := newFixture(t, catalogsite.Options{Items: 30, PerPage: 10})
	books := f.config("books", "", nil)
	path := filepath.Join(f.dir, "lineage.jsonl")
	r := runMainEnv(t, map[string]string{"OPENLINEAGE_URL": "marquez:5000"}, "run", "--lineage-file", path, books)
	if r.code != ExitOK || strings.Count(r.stderr, "OPENLINEAGE_URL") != 1 {
		t.Fatalf("exit %d, stderr %q; want 0 and one word of OPENLINEAGE_URL", r.code, r.stderr)
	}
	if n := len(lineageLines(t, path)); n != 2 {
		t.Errorf("%d events in the file, want 2", n)
	}
}
