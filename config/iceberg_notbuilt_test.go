//go:build !iceberg

package config

import (
	"strings"
	"testing"
)

// TestIcebergOutputNeedsTheBuild: a binary built without Iceberg refuses
// an iceberg:// output as a config error naming the build, once.
func TestIcebergOutputNeedsTheBuild(t *testing.T) {
	doc := `output = "iceberg://shop.books"` + "\n" + good + "[iceberg]\nuri = \"sqlite:///tmp/c.db\"\nwarehouse = \"file:///tmp/wh\"\n"
	_, err := Parse("site.toml", []byte(doc))
	es := AsErrors(err)
	if len(es) != 1 || es[0].Key != "output" || es[0].Line != 1 || !strings.Contains(es[0].Msg, "make build-iceberg") {
		t.Fatalf("errors %v; want one at site.toml:1 output naming make build-iceberg", err)
	}
}
