package verdict

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestNoIOImports keeps the domain pure: the verdict package may use only
// these standard packages.
func TestNoIOImports(t *testing.T) {
	allowed := map[string]bool{"errors": true, "fmt": true, "math": true, "strconv": true, "strings": true, "time": true}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[path] {
				t.Errorf("%s imports %s: the verdict package must not do I/O", e.Name(), path)
			}
		}
	}
}
