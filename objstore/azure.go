package objstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
)

func init() {
	drivers["azblob"] = driver{open: openAzure}
}

// openAzure opens an azblob:// container. Credentials and the service URL
// come from AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_KEY,
// AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_SAS_TOKEN or Azure's
// default credential chain, and the URL's domain, protocol, localemu and
// cdn parameters; see gocloud.dev/blob/azureblob. gocloud's own opener
// reads the environment once per process, at the first open; this one
// reads it at each, as the S3 opener does, so a process that opens
// outputs more than once sees the environment as it is.
//
// When a connection string is what authenticates (no account with a key,
// no SAS token: gocloud's order), its endpoints are the service's, so the
// container client is made from it alone. gocloud would first build a
// service URL it then ignores, and refuse one of protocol http unless
// localemu is set, which fails the connection strings of Azurite and
// Azure Stack (DefaultEndpointsProtocol=http, a BlobEndpoint of their
// own).
func openAzure(ctx context.Context, bucketURL string) (*blob.Bucket, error) {
	u, err := url.Parse(bucketURL)
	if err != nil {
		return nil, err
	}
	if cs, name := azureConnectionString(); cs != "" {
		for p := range u.Query() {
			return nil, fmt.Errorf("parameter %q: %s names the endpoint, the URL may not", p, name)
		}
		client, err := container.NewClientFromConnectionString(cs, u.Host, nil)
		if err != nil {
			// The SDK's error does not repeat the string, whose key is
			// a secret.
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return azureblob.OpenBucket(ctx, client, nil)
	}
	o := &azureblob.URLOpener{
		MakeClient:        azureblob.NewDefaultClient,
		ServiceURLOptions: *azureblob.NewDefaultServiceURLOptions(),
	}
	return o.OpenBucketURL(ctx, u)
}

// azureConnectionString is the connection string gocloud's default client
// would authenticate with, and the variable it came from: "" when an
// account with a key or a SAS token comes first.
func azureConnectionString() (cs, name string) {
	if os.Getenv("AZURE_STORAGE_ACCOUNT") != "" && os.Getenv("AZURE_STORAGE_KEY") != "" ||
		os.Getenv("AZURE_STORAGE_SAS_TOKEN") != "" {
		return "", ""
	}
	for _, name := range []string{"AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGEBLOB_CONNECTIONSTRING"} {
		if cs := os.Getenv(name); cs != "" {
			return cs, name
		}
	}
	return "", ""
}

// azureCredentialSource names what gocloud's default client
// authenticates with, in its order, for a person to check.
func azureCredentialSource() string {
	switch cs, name := azureConnectionString(); {
	case os.Getenv("AZURE_STORAGE_ACCOUNT") != "" && os.Getenv("AZURE_STORAGE_KEY") != "":
		return fmt.Sprintf("AZURE_STORAGE_KEY (the key of account %q)", os.Getenv("AZURE_STORAGE_ACCOUNT"))
	case os.Getenv("AZURE_STORAGE_SAS_TOKEN") != "":
		return "AZURE_STORAGE_SAS_TOKEN (its expiry and permissions)"
	case cs != "":
		return name + " (its AccountKey or SharedAccessSignature)"
	default:
		return "Azure's default credential chain (AZURE_CLIENT_ID, AZURE_TENANT_ID, the managed identity, az login)"
	}
}

// classifyAzure tells why an Azure request failed, from the error code of
// the service's answer; ok is false for an error that is not such an
// answer, or whose code says nothing classify does not already tell.
func (t *Target) classifyAzure(err error) (reason string, kind error, ok bool) {
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return "", nil, false
	}
	code := bloberror.Code(re.ErrorCode)
	credentials := func() (string, error, bool) {
		return fmt.Sprintf("Azure Blob Storage refused the credentials (%d %s): check %s",
			re.StatusCode, code, azureCredentialSource()), ErrCredentials, true
	}
	switch code {
	case bloberror.ContainerNotFound:
		return fmt.Sprintf("container %q does not exist", t.name), ErrNoBucket, true
	case bloberror.AuthenticationFailed, bloberror.InvalidAuthenticationInfo, bloberror.NoAuthenticationInformation:
		// A wrong key, an expired or malformed SAS token, or a clock too
		// far off; gocloud counts AuthenticationFailed as PermissionDenied.
		return credentials()
	case bloberror.AuthorizationFailure:
		// Azure refuses a request its firewall or policy forbids with
		// AuthorizationFailure; Azurite also answers a wrong key with it,
		// and the message Azure gives AuthenticationFailed.
		if strings.Contains(re.Error(), "failed to authenticate the request") {
			return credentials()
		}
		return fmt.Sprintf("access denied (%s): the credentials lack a permission on container %q", code, t.name), ErrDenied, true
	case bloberror.AuthorizationPermissionMismatch, bloberror.AuthorizationResourceTypeMismatch,
		bloberror.AuthorizationServiceMismatch, bloberror.AuthorizationProtocolMismatch, bloberror.AuthorizationSourceIPMismatch,
		bloberror.InsufficientAccountPermissions:
		return fmt.Sprintf("access denied (%s): the credentials lack a permission on container %q", code, t.name), ErrDenied, true
	}
	return "", nil, false
}
