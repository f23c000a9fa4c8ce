package objstore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob/s3blob"
)

// OneAttempt makes an S3 target try each request once: gocloud installs
// its own retryer, which ignores AWS_MAX_ATTEMPTS, and the SDK's three
// attempts against a closed port take up to six seconds of backoff.
func OneAttempt(t *Target) error {
	c := s3.New(t.s3.Options(), func(o *s3.Options) { o.RetryMaxAttempts = 1 })
	b, err := s3blob.OpenBucket(context.Background(), c, t.name, nil)
	if err != nil {
		return err
	}
	t.bucket.Close()
	t.bucket, t.s3 = b, c
	return nil
}
