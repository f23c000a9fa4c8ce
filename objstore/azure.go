package objstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
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
func openAzure(ctx context.Context, bucketURL string) (*blob.Bucket, error) {
	u, err := url.Parse(bucketURL)
	if err != nil {
		return nil, err
	}
	o := &azureblob.URLOpener{
		MakeClient:        azureblob.NewDefaultClient,
		ServiceURLOptions: *azureblob.NewDefaultServiceURLOptions(),
	}
	return o.OpenBucketURL(ctx, u)
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
		return fmt.Sprintf("the store rejected the credentials (%s): check AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY, "+
			"the SAS token or the connection string", code), ErrCredentials, true
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
