package stage

import (
	"strings"
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
	for _, step := range PublishSteps {
		t.Run(string(step), func(t *testing.T) {
			publishCutAt(t, openLake(t, srv, "exports-"+string(step)), step)
		})
	}
}

// bareAzureURL gives Azurite's output URLs without query parameters: the
// endpoint comes from the environment, as a connection string or
// AZURE_STORAGE_DOMAIN and its siblings name it.
type bareAzureURL struct{}

// URL is azblob://lake/PREFIX.
func (bareAzureURL) URL(prefix string) string {
	return "azblob://" + azuritetest.Container + "/" + prefix
}

// TestObjectStore_ARunPublishesIntoAzureBlobWithAConnectionString
// publishes into Azurite with AZURE_STORAGE_CONNECTION_STRING alone, as
// Azurite's documentation and Azure Stack give it: an http BlobEndpoint
// that names the account in its path.
func TestObjectStore_ARunPublishesIntoAzureBlobWithAConnectionString(t *testing.T) {
	srv := azuritetest.Start(t)
	srv.SetEnv(t)
	t.Setenv("AZURE_STORAGE_ACCOUNT", "")
	t.Setenv("AZURE_STORAGE_KEY", "")
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", srv.ConnectionString())
	aRunPublishes(t, openLake(t, bareAzureURL{}, "exports"), "azblob://lake/exports/")
}

// TestObjectStore_ARunPublishesIntoAzureBlobWithAnEndpointFromTheEnvironment
// publishes into Azurite with an account and key, the endpoint named by
// AZURE_STORAGE_DOMAIN, AZURE_STORAGE_PROTOCOL and
// AZURE_STORAGE_IS_LOCAL_EMULATOR instead of the URL's parameters.
func TestObjectStore_ARunPublishesIntoAzureBlobWithAnEndpointFromTheEnvironment(t *testing.T) {
	srv := azuritetest.Start(t)
	srv.SetEnv(t)
	t.Setenv("AZURE_STORAGE_DOMAIN", strings.TrimPrefix(srv.Endpoint(), "http://"))
	t.Setenv("AZURE_STORAGE_PROTOCOL", "http")
	t.Setenv("AZURE_STORAGE_IS_LOCAL_EMULATOR", "true")
	aRunPublishes(t, openLake(t, bareAzureURL{}, "exports"), "azblob://lake/exports/")
}
