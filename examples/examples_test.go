// Package examples holds files a user copies: Airflow DAGs (one run, and
// one run as shards), a Dagster asset, a Kubernetes CronJob and Indexed
// Job, a cron + jq pipeline and a DuckDB query.
// The tests check them as far as a machine without those systems allows.
package examples

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/sink"
)

// readManifests decodes every document of a Kubernetes manifest file and
// checks that each is a resource with an apiVersion, a kind and a name.
func readManifests(t *testing.T, name string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join("kubernetes", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	var docs []map[string]any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		meta, _ := doc["metadata"].(map[string]any)
		if doc["apiVersion"] == nil || doc["kind"] == nil || meta["name"] == nil {
			t.Fatalf("%s: a document without apiVersion, kind or metadata.name: %v", name, doc)
		}
		docs = append(docs, doc)
	}
	return docs
}

// The Kubernetes manifests parse, and each document is a resource with an
// apiVersion, a kind and a name; the CronJob keeps one run at a time and
// mounts the state volume where the config's storage is.
func TestKubernetesManifestsParse(t *testing.T) {
	kinds := map[string]map[string]any{}
	for _, doc := range readManifests(t, "cronjob.yaml") {
		kinds[doc["kind"].(string)] = doc
	}
	cron := kinds["CronJob"]
	if cron == nil || kinds["PersistentVolumeClaim"] == nil || kinds["ConfigMap"] == nil {
		t.Fatalf("kinds = %v, want a CronJob, its PersistentVolumeClaim and ConfigMap", keys(kinds))
	}
	spec := cron["spec"].(map[string]any)
	if spec["concurrencyPolicy"] != "Forbid" {
		t.Fatalf("concurrencyPolicy = %v, want Forbid", spec["concurrencyPolicy"])
	}
	cfg := kinds["ConfigMap"]["data"].(map[string]any)["books.toml"].(string)
	if !strings.Contains(cfg, `storage = "/var/lib/databrew/books"`) {
		t.Fatalf("the config's storage is not under the state volume's mount:\n%s", cfg)
	}
	pod := spec["jobTemplate"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	mounts := pod["containers"].([]any)[0].(map[string]any)["volumeMounts"].([]any)
	if mounts[0].(map[string]any)["mountPath"] != "/var/lib/databrew" {
		t.Fatalf("the state volume is mounted at %v", mounts[0])
	}
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The Airflow DAGs and the Dagster asset are valid Python.
func TestPythonExamplesCompile(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on this machine")
	}
	for _, f := range []string{
		filepath.Join("airflow", "databrew_dag.py"),
		filepath.Join("airflow", "shards_dag.py"),
		filepath.Join("dagster", "databrew_asset.py"),
	} {
		cmd := exec.Command(python, "-c", "import sys, py_compile; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)",
			f, filepath.Join(t.TempDir(), "out.pyc"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", f, err, out)
		}
	}
}

// The cron + jq pipeline runs on a real run: published, then nothing new,
// then a failed crawl that exits 1.
func TestShellPipelineRuns(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("no jq on this machine")
	}
	dir := t.TempDir()
	bin := buildStage(t)
	site, config := booksSite(t, dir)
	run := func() (string, string, int) {
		cmd := exec.Command("bash", filepath.Join("shell", "nightly.sh"), config)
		cmd.Env = append(os.Environ(), "DATABREW_STAGE="+bin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), code
	}
	out, errOut, code := run()
	if code != 0 || !strings.HasPrefix(out, "published 30 rows to "+filepath.Join(dir, "out", "dt=")) {
		t.Fatalf("first night: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = run()
	if code != 0 || out != "nothing new: 30 unchanged, 0 skipped\n" {
		t.Fatalf("second night: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, PathPrefix: "/catalogue/page-1.html", Status: 500})
	out, errOut, code = run()
	if code != 1 || !strings.Contains(errOut, "the crawl failed (exit 1): queue_empty") {
		t.Fatalf("a failed night: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// stageDir holds the databrew-stage the tests build, once.
var stageDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if stageDir != "" {
		os.RemoveAll(stageDir)
	}
	os.Exit(code)
}

// buildStage returns the path of a databrew-stage built from this tree,
// building it the first time a test asks.
var buildStage = func() func(t *testing.T) string {
	var once sync.Once
	var bin string
	var err error
	return func(t *testing.T) string {
		t.Helper()
		once.Do(func() {
			if stageDir, err = os.MkdirTemp("", "examples-stage-"); err != nil {
				return
			}
			bin = filepath.Join(stageDir, "databrew-stage")
			if out, berr := exec.Command("go", "build", "-o", bin, "../cmd/databrew-stage").CombinedOutput(); berr != nil {
				err = fmt.Errorf("build: %v\n%s", berr, out)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return bin
	}
}()

// booksSite serves a catalog of 30 items and writes dir/books.toml, a
// config named "books" for it, its state and output in dir. The site
// is closed when the test ends.
func booksSite(t *testing.T, dir string) (*catalogsite.Site, string) {
	t.Helper()
	site := catalogsite.New(catalogsite.Options{Items: 30, PerPage: 10})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	config := filepath.Join(dir, "books.toml")
	toml := fmt.Sprintf(`name = "books"
start_urls = [%q]
storage = %q
output = %q

[policy]
timeout = "2s"
backoff = "1ms"
max_backoff = "5ms"
retry_pass_delay = "10ms"
pause = "0s"
`, catalogsite.StartURL(srv.URL), filepath.Join(dir, "state"), filepath.Join(dir, "out")) + catalogsite.ExtractConfig
	if err := os.WriteFile(config, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	return site, config
}

// The DuckDB query (not run: no DuckDB here) names only columns every
// export has, and reads only runs with _SUCCESS.
func TestDuckDBQueryNamesExportColumns(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("duckdb", "committed_runs.sql"))
	if err != nil {
		t.Fatal(err)
	}
	sql := string(b)
	system := map[string]bool{}
	for _, c := range sink.SystemColumns() {
		system[c.Name] = true
	}
	for _, m := range regexp.MustCompile(`p\.(_[a-z_]+)`).FindAllStringSubmatch(sql, -1) {
		if !system[m[1]] {
			t.Errorf("the query reads column %s, which no export has", m[1])
		}
	}
	if !strings.Contains(sql, "/_SUCCESS") {
		t.Error("the query does not join the parts to _SUCCESS")
	}
}
