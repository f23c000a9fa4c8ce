package objstore

import "testing"

// TestAzureUnreachable points the Azure client at a closed port.
func TestAzureUnreachable(t *testing.T) {
	t.Setenv("AZURE_STORAGE_ACCOUNT", "devstoreaccount1")
	t.Setenv("AZURE_STORAGE_KEY", "ZGF0YWJyZXctdGVzdC1rZXk=")
	preflightUnreachable(t, "azblob://lake/exports?protocol=http&localemu=true&domain="+closedHost(t))
}
