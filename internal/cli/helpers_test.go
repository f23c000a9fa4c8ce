package cli

import (
	"bytes"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/databrew/databrew-stage/internal/catalogsite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// result is what one in-process invocation of Main left behind.
type result struct {
	code           int
	stdout, stderr string
}

// runMain runs the command line in-process with captured streams.
func runMain(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(args, Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
	t.Logf("databrew-stage %s: exit %d\nstdout:\n%sstderr:\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// fixture is a catalog site on loopback and a folder for configs, state
// and output.
type fixture struct {
	t    *testing.T
	site *catalogsite.Site
	srv  *httptest.Server
	dir  string
}

func newFixture(t *testing.T, opts catalogsite.Options) *fixture {
	t.Helper()
	f := &fixture{t: t, site: catalogsite.New(opts), dir: t.TempDir()}
	f.srv = httptest.NewServer(f.site)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) startURL() string { return catalogsite.StartURL(f.srv.URL) }

// fastPolicy keeps every wait in milliseconds.
var fastPolicy = map[string]string{
	"concurrency":      "4",
	"timeout":          `"2s"`,
	"backoff":          `"1ms"`,
	"max_backoff":      `"5ms"`,
	"retry_pass_delay": `"10ms"`,
	"pause":            `"0s"`,
}

const itemSection = catalogsite.ExtractConfig

// config writes NAME.toml crawling start (the site's first listing page
// when empty) into storage state/NAME; policy entries override fastPolicy.
// It returns the config file's path.
func (f *fixture) config(name, start string, policy map[string]string) string {
	f.t.Helper()
	if start == "" {
		start = f.startURL()
	}
	p := maps.Clone(fastPolicy)
	maps.Copy(p, policy)
	var b strings.Builder
	fmt.Fprintf(&b, "name = %q\nstart_urls = [%q]\nstorage = \"state/%s\"\noutput = \"out/%s\"\n\n[policy]\n", name, start, name, name)
	for _, k := range slices.Sorted(maps.Keys(p)) {
		fmt.Fprintf(&b, "%s = %s\n", k, p[k])
	}
	b.WriteString(itemSection)
	path := filepath.Join(f.dir, name+".toml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return path
}

// storage is the storage path of config name.
func (f *fixture) storage(name string) string { return filepath.Join(f.dir, "state", name) }
