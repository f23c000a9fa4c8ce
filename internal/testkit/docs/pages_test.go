package docs_test

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/testkit/docs"
)

const root = "../../.."

func pages(t *testing.T) []docs.Page {
	t.Helper()
	ps, err := docs.Pages(root)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestLinksResolve: every relative link of README.md and docs/*.md names a
// file or folder of the repository, and every #anchor a heading of the
// page it points into.
func TestLinksResolve(t *testing.T) {
	ps := pages(t)
	n := 0
	for _, p := range ps {
		n += len(p.Links())
	}
	if n < 50 {
		t.Fatalf("only %d links found in %d pages: the link reader misses them", n, len(ps))
	}
	for _, problem := range docs.Check(root, ps, nil) {
		t.Error(problem)
	}
}

// TestReadmeLinksEveryDocsPage: the README's Documentation list is the way
// into docs/, so it names every page there.
func TestReadmeLinksEveryDocsPage(t *testing.T) {
	ps := pages(t)
	_, section, ok := docs.Section(ps, "Documentation")
	if !ok || ps[0].Path != "README.md" {
		t.Fatal("README.md has no Documentation section")
	}
	linked := map[string]bool{}
	for _, l := range (docs.Page{Path: "README.md", Text: section}).Links() {
		linked[l.Target] = true
	}
	for _, p := range ps[1:] {
		if !linked[p.Path] {
			t.Errorf("the README's Documentation list does not link %s", p.Path)
		}
	}
}

// TestTOMLBlocksLoad: every toml block of README.md and docs/*.md is a
// complete config that loads, unless it is marked <!-- fragment -->: then
// it is TOML, and it is not a config that loads on its own (so no complete
// config escapes the check by its mark).
func TestTOMLBlocksLoad(t *testing.T) {
	env := config.Options{Getenv: func(name string) string { return "docs-" + strings.ToLower(name) }}
	var configs, fragments int
	for _, p := range pages(t) {
		for _, b := range p.Blocks() {
			if b.Lang != "toml" {
				continue
			}
			_, err := config.ParseWith(b.Where(), []byte(b.Text), env)
			switch b.Marker {
			case "fragment":
				fragments++
				var v map[string]any
				if err := toml.Unmarshal([]byte(b.Text), &v); err != nil {
					t.Errorf("%s: the fragment is not TOML: %v", b.Where(), err)
				}
				if err == nil {
					t.Errorf("%s: marked as a fragment, but it is a config that loads: drop the mark", b.Where())
				}
			default:
				configs++
				if err != nil {
					t.Errorf("%s: the config does not load (mark a partial one <!-- fragment -->):\n%v", b.Where(), err)
				}
			}
		}
	}
	if configs < 20 || fragments < 5 {
		t.Fatalf("%d configs and %d fragments found: the block reader misses them", configs, fragments)
	}
}
