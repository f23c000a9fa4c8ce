package cli

import (
	"path/filepath"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/docs"
)

// TestReadmeExampleIsTheDemoConfig: the README's example config, marked
// <!-- demo config -->, is the config demo --serve writes on its default
// port, so the front door shows what a newcomer finds in databrew-demo/.
func TestReadmeExampleIsTheDemoConfig(t *testing.T) {
	pages, err := docs.Pages(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	want := demoConfig(catalogsite.StartURL("http://127.0.0.1:8390"))
	found := 0
	for _, b := range pages[0].Blocks() {
		if b.Marker != "demo config" {
			continue
		}
		found++
		if b.Text != want {
			t.Errorf("%s differs from the config demo --serve writes:\n%s\nwant:\n%s", b.Where(), b.Text, want)
		}
	}
	if found != 1 {
		t.Fatalf("%s has %d blocks marked <!-- demo config -->, want 1", pages[0].Path, found)
	}
}
