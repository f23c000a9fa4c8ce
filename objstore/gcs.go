//go:build gcs

package objstore

import (
	"context"
	"net/url"
	"os"

	"gocloud.dev/blob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcp"
)

func init() {
	drivers["gs"] = driver{open: openGCS}
}

// openGCS opens a gs:// bucket with the application default credentials.
// It looks them up itself because gocloud's default opener, finding none,
// prints a warning on standard output (which may carry the run's JSON)
// and goes on without credentials; here their absence fails Open with an
// *UnusableError of kind ErrCredentials. With an emulator
// (STORAGE_EMULATOR_HOST), anonymous=true or universe_domain, gocloud's
// opener is used as it is.
func openGCS(ctx context.Context, bucketURL string) (*blob.Bucket, error) {
	u, err := url.Parse(bucketURL)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	if os.Getenv("STORAGE_EMULATOR_HOST") != "" || os.Getenv("STORAGE_EMULATOR_HOST_GRPC") != "" ||
		q.Has("anonymous") || q.Has("universe_domain") {
		return blob.OpenBucket(ctx, bucketURL)
	}
	creds, err := gcp.DefaultCredentials(ctx)
	if err != nil {
		return nil, &UnusableError{Kind: ErrCredentials,
			Reason: "no Google credentials found: set GOOGLE_APPLICATION_CREDENTIALS or run gcloud auth application-default login", Err: err}
	}
	client, err := gcp.NewHTTPClient(gcp.DefaultTransport(), creds.TokenSource)
	if err != nil {
		return nil, err
	}
	o := &gcsblob.URLOpener{Client: client, TokenSource: gcp.CredentialsTokenSource(creds)}
	return o.OpenBucketURL(ctx, u)
}
