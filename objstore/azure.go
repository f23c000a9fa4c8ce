package objstore

import (
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // registers azblob:// with gocloud
)

func init() {
	// Credentials and the service URL come from AZURE_STORAGE_ACCOUNT,
	// AZURE_STORAGE_KEY, AZURE_STORAGE_CONNECTION_STRING,
	// AZURE_STORAGE_SAS_TOKEN or Azure's default credential chain; see
	// gocloud.dev/blob/azureblob.
	drivers["azblob"] = driver{open: blob.OpenBucket}
}
