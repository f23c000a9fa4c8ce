package stage

import (
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/azuritetest"
)

// newAzureLake starts Azurite and opens the prefix "exports" of its
// container with the test's own client.
func newAzureLake(t *testing.T) *lake {
	t.Helper()
	srv := azuritetest.Start(t)
	srv.SetEnv(t)
	return openLake(t, srv, "exports")
}

// TestObjectStore_ARunPublishesIntoAzureBlob publishes 50 items into
// Azurite, whose parts are visible once written: see aRunPublishes.
func TestObjectStore_ARunPublishesIntoAzureBlob(t *testing.T) {
	l := newAzureLake(t)
	if l.t.HidesParts() {
		t.Fatal("HidesParts = true on azblob://")
	}
	aRunPublishes(t, l, "azblob://lake/exports/")
}

// TestObjectStore_APublishCutAtAnyStepReachesAzureBlobExactlyOnce abandons
// a publish into Azurite after each step of its protocol, as a crash
// would, then runs again: every item reaches exactly one committed run and
// no run prefix holds objects without _SUCCESS. There the part is visible
// once uploaded; a rolled-back publish deletes it. One server serves every
// step, each under its own prefix.
func TestObjectStore_APublishCutAtAnyStepReachesAzureBlobExactlyOnce(t *testing.T) {
	srv := azuritetest.Start(t)
	srv.SetEnv(t)
	for _, step := range ObjectPublishSteps {
		t.Run(string(step), func(t *testing.T) {
			publishCutAt(t, openLake(t, srv, "exports-"+string(step)), step)
		})
	}
}
