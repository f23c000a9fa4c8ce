package objstore

import (
	"context"
	"strings"
	"testing"
)

// TestAzureUnreachable points the Azure client at a closed port.
func TestAzureUnreachable(t *testing.T) {
	t.Setenv("AZURE_STORAGE_ACCOUNT", "devstoreaccount1")
	t.Setenv("AZURE_STORAGE_KEY", "ZGF0YWJyZXctdGVzdC1rZXk=")
	preflightUnreachable(t, "azblob://lake/exports?protocol=http&localemu=true&domain="+closedHost(t))
}

// TestAzureConnectionStringNamesTheEndpoint checks that, with a connection
// string authenticating, the URL may not name an endpoint of its own (the
// string's would win silently), and that a malformed string is named.
func TestAzureConnectionStringNamesTheEndpoint(t *testing.T) {
	t.Setenv("AZURE_STORAGE_ACCOUNT", "")
	t.Setenv("AZURE_STORAGE_KEY", "")
	t.Setenv("AZURE_STORAGE_SAS_TOKEN", "")
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"+
		"AccountKey=ZGF0YWJyZXctdGVzdC1rZXk=;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;")
	_, err := Open(context.Background(), "azblob://lake/exports?domain=127.0.0.1:10000")
	if err == nil || !strings.Contains(err.Error(), `parameter "domain": AZURE_STORAGE_CONNECTION_STRING names the endpoint`) {
		t.Fatalf("Open = %v; want the parameter refused", err)
	}
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "")
	t.Setenv("AZURE_STORAGEBLOB_CONNECTIONSTRING", "AccountKey=secret")
	_, err = Open(context.Background(), "azblob://lake/exports")
	if err == nil || !strings.Contains(err.Error(), "AZURE_STORAGEBLOB_CONNECTIONSTRING: ") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("Open = %v; want the variable named, not its value", err)
	}
}
