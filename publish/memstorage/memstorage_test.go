package memstorage_test

import (
	"testing"

	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/publish/memstorage"
	"github.com/databrew/databrew-stage/publish/storagetest"
)

// TestConformance runs the suite with the capabilities of each real
// backend: a folder's, S3's and Azure's or Google's.
func TestConformance(t *testing.T) {
	for name, caps := range map[string]publish.Caps{
		"folder-like": {HidesParts: true, CompletesAtOnce: true},
		"s3-like":     {HidesParts: true},
		"azure-like":  {},
	} {
		t.Run(name, func(t *testing.T) {
			storagetest.Run(t, func(*testing.T) publish.Storage { return memstorage.New(caps) })
		})
	}
}
