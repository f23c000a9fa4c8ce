package state_test

import (
	"testing"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/crawl/storetest"
	"github.com/databrew/databrew-stage/state"
)

// TestStoreConformance runs the crawl.Store conformance suite on a state
// file.
func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) crawl.Store {
		db, err := state.Open(t.TempDir(), state.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := db.Close(); err != nil {
				t.Error(err)
			}
		})
		return db
	})
}
