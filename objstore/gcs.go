//go:build gcs

package objstore

import (
	"context"
	"net/url"
	"os"
	"strconv"

	"gocloud.dev/blob"
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/gcp"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/option"
)

func init() {
	drivers["gs"] = driver{open: openGCS}
}

// openGCS opens a gs:// bucket. Without an emulator it never goes through
// gocloud's default opener, which, finding no credentials, prints a
// warning on standard output (which may carry the run's JSON) and goes on
// without them. anonymous=true and access_id=- open it without
// credentials; otherwise the application default credentials are looked
// up here (for the URL's universe_domain, if any), and their absence
// fails Open with an *UnusableError of kind ErrCredentials. With an
// emulator (STORAGE_EMULATOR_HOST, or STORAGE_EMULATOR_HOST_GRPC for the
// gRPC API), gocloud's opener is used as it is: it sends no credentials.
func openGCS(ctx context.Context, bucketURL string) (*blob.Bucket, error) {
	u, err := url.Parse(bucketURL)
	if err != nil {
		return nil, err
	}
	if os.Getenv("STORAGE_EMULATOR_HOST") != "" || os.Getenv("STORAGE_EMULATOR_HOST_GRPC") != "" {
		return blob.OpenBucket(ctx, bucketURL)
	}
	q := u.Query()
	if anon, _ := strconv.ParseBool(q.Get("anonymous")); anon || q.Get("access_id") == "-" {
		// The opener gives such a URL a client of its own, without credentials.
		return (&gcsblob.URLOpener{}).OpenBucketURL(ctx, u)
	}
	creds, err := gcp.DefaultCredentialsWithParams(ctx, google.CredentialsParams{UniverseDomain: q.Get("universe_domain")})
	if err != nil {
		return nil, &UnusableError{Kind: ErrCredentials,
			Reason: "no Google credentials found: set GOOGLE_APPLICATION_CREDENTIALS or run gcloud auth application-default login", Err: err}
	}
	client, err := gcp.NewHTTPClient(gcp.DefaultTransport(), creds.TokenSource)
	if err != nil {
		return nil, err
	}
	// The client's universe is the credentials' (a key file may name one),
	// else the URL's, as with gocloud's opener.
	var opts gcsblob.Options
	ud, err := creds.GetUniverseDomain()
	if err != nil || ud == "" {
		ud = q.Get("universe_domain")
	}
	if ud != "" {
		opts.ClientOptions = []option.ClientOption{option.WithUniverseDomain(ud)}
	}
	o := &gcsblob.URLOpener{Client: client, TokenSource: gcp.CredentialsTokenSource(creds), Options: opts}
	return o.OpenBucketURL(ctx, u)
}
