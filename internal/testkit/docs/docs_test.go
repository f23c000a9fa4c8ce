package docs_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/docs"
)

// The readers on pages made for them, so the tests of the real pages can
// fail.

func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCheckFindsBrokenLinksAndAnchors(t *testing.T) {
	dir := write(t, map[string]string{
		"README.md": "# Title\n\n## The verdict: stop and outcome\n\n" +
			"See [ok](docs/a.md#9-shopifys-productsjson), [ok](#title), [ok](docs/), [web](https://example.com/x#y),\n" +
			"[a link over\ntwo lines](docs/a.md#nothing-here) and [gone](docs/gone.md).\n" +
			"`[in code](docs/gone.md)` and <!-- [in a comment](docs/gone.md) -->\n\n" +
			"```md\n[in a block](docs/gone.md)\n```\n\n" +
			"[pending](examples/x/README.md) [self](#the-verdict-stop-and-outcome) [bad self](#the-verdict)\n",
		"docs/a.md": "# A\n\n## 9. Shopify's `products.json`\n\nBack to the [README](../README.md#title); [up](../../x.md); " +
			"[anchor into code](../go.mod#x).\n\n```toml\n# not a heading\n```\n",
		"go.mod": "module x\n",
	})
	ps, err := docs.Pages(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := docs.Check(dir, ps, map[string]bool{"examples/x/README.md": true})
	want := []string{
		"README.md:7: link docs/a.md#nothing-here: docs/a.md has no heading with the anchor #nothing-here",
		"README.md:7: link docs/gone.md: no file docs/gone.md",
		"README.md:14: link #the-verdict: README.md has no heading with the anchor #the-verdict",
		"docs/a.md:5: link ../../x.md: points outside the repository",
		"docs/a.md:5: link ../go.mod#x: an anchor into go.mod, which is no Markdown page",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Publishing into a data lake: S3, Azure Blob, GCS":           "publishing-into-a-data-lake-s3-azure-blob-gcs",
		"2. Microdata cards, data attributes, `<link rel=\"next\">`": "2-microdata-cards-data-attributes-link-relnext",
		"13. Next.js: the listing's `__NEXT_DATA__` as cards":        "13-nextjs-the-listings-__next_data__-as-cards",
		"16. A Swiss Java shop: `;jsessionid=` and `CHF 1'234.50`":   "16-a-swiss-java-shop-jsessionid-and-chf-123450",
		"Deadlines: the crawl stops, the export follows":             "deadlines-the-crawl-stops-the-export-follows",
		"Kubernetes, cron":                                               "kubernetes-cron",
		"Dagster (Pipes)":                                                "dagster-pipes",
		"**Bold** and `code` – with an en dash":                          "bold-and-code--with-an-en-dash",
		"Größe à la carte":                                               "größe-à-la-carte",
		"5. JSON API listings (\"infinite scroll\")":                     "5-json-api-listings-infinite-scroll",
		"Seventeen catalog structures, one config each":                  "seventeen-catalog-structures-one-config-each",
		"Architecture: code layout, dependencies, tests and benchmarks":  "architecture-code-layout-dependencies-tests-and-benchmarks",
		"Operations: running a stage, how a run ends, when things break": "operations-running-a-stage-how-a-run-ends-when-things-break",
		"The export: only new or changed items, exactly once":            "the-export-only-new-or-changed-items-exactly-once",
		"When the site falls over: pause and probe":                      "when-the-site-falls-over-pause-and-probe",
		"The verdict: stop and outcome":                                  "the-verdict-stop-and-outcome",
		"Reruns: conditional requests and revisits":                      "reruns-conditional-requests-and-revisits",
		"Monitoring: Prometheus metrics and OpenLineage":                 "monitoring-prometheus-metrics-and-openlineage",
		"Outputs: the export and the data lake":                          "outputs-the-export-and-the-data-lake",
		"Shards: one logical run from N tasks":                           "shards-one-logical-run-from-n-tasks",
		"Limits against hostile sites":                                   "limits-against-hostile-sites",
	} {
		if got := docs.Anchor(heading); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", heading, got, want)
		}
	}
	hs := (docs.Page{Text: "# A\n## A\n```\n# A\n```\n### A\n#no heading\n"}).Headings()
	var anchors []string
	for _, h := range hs {
		anchors = append(anchors, h.Anchor)
	}
	if want := []string{"a", "a-1", "a-2"}; !slices.Equal(anchors, want) {
		t.Errorf("anchors %v, want %v", anchors, want)
	}
}

func TestBlocksAndMarkers(t *testing.T) {
	p := docs.Page{Path: "docs/x.md", Text: "Text\n\n<!-- fragment -->\n```toml\n[render]\n```\n\n" +
		"- item:\n\n  <!-- shop: jsonld api=links -->\n  ```toml\n  name = \"x\"\n    deep = 1\n  ```\n\n" +
		"<!-- a note -->\nprose\n\n```sh\nmake demo\n```\n"}
	got := p.Blocks()
	want := []docs.Block{
		{Page: "docs/x.md", Line: 4, Lang: "toml", Marker: "fragment", Text: "[render]\n"},
		{Page: "docs/x.md", Line: 11, Lang: "toml", Marker: "shop: jsonld api=links", Text: "name = \"x\"\n  deep = 1\n"},
		{Page: "docs/x.md", Line: 19, Lang: "sh", Text: "make demo\n"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("blocks:\n%+v\nwant:\n%+v", got, want)
	}
	_, section, ok := docs.Section([]docs.Page{{Text: "# T\n## A\na\n### B\nb\n## C\nc\n"}}, "A")
	if !ok || section != "## A\na\n### B\nb" {
		t.Errorf("section %q, %v", section, ok)
	}
}
