package objstore

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// The multipart requests, straight to the S3 client under gocloud. Keys
// need no escaping: checkKey admits only keys gocloud leaves as they are.

// upload is one in-progress multipart upload.
type upload struct {
	key       string
	id        string
	initiated time.Time
}

// createUpload starts a multipart upload of key, with the checksum and
// server-side encryption settings gocloud's own uploads would use.
func (t *Target) createUpload(ctx context.Context, key string) (string, error) {
	in := &s3.CreateMultipartUploadInput{
		Bucket:            aws.String(t.name),
		Key:               aws.String(key),
		ContentType:       aws.String(contentType),
		ChecksumAlgorithm: t.checksum,
	}
	if t.sse != "" {
		in.ServerSideEncryption = t.sse
	}
	if t.kmsKeyID != "" {
		in.SSEKMSKeyId = aws.String(t.kmsKeyID)
	}
	out, err := call(ctx, t, func(ctx context.Context) (*s3.CreateMultipartUploadOutput, error) {
		return t.s3.CreateMultipartUpload(ctx, in)
	})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.UploadId), nil
}

// uploadPart uploads data as part number n of an upload.
func (t *Target) uploadPart(ctx context.Context, key, id string, n int32, data []byte) (*s3.UploadPartOutput, error) {
	return call(ctx, t, func(ctx context.Context) (*s3.UploadPartOutput, error) {
		return t.s3.UploadPart(ctx, &s3.UploadPartInput{
			Bucket:            aws.String(t.name),
			Key:               aws.String(key),
			UploadId:          aws.String(id),
			PartNumber:        aws.Int32(n),
			Body:              bytes.NewReader(data),
			ContentLength:     aws.Int64(int64(len(data))),
			ChecksumAlgorithm: t.checksum,
		})
	})
}

// listParts lists every uploaded part of an upload, in order.
func (t *Target) listParts(ctx context.Context, key, id string) ([]types.Part, error) {
	var parts []types.Part
	in := &s3.ListPartsInput{Bucket: aws.String(t.name), Key: aws.String(key), UploadId: aws.String(id)}
	for {
		out, err := call(ctx, t, func(ctx context.Context) (*s3.ListPartsOutput, error) { return t.s3.ListParts(ctx, in) })
		if err != nil {
			return nil, err
		}
		parts = append(parts, out.Parts...)
		if !aws.ToBool(out.IsTruncated) || aws.ToString(out.NextPartNumberMarker) == "" ||
			aws.ToString(out.NextPartNumberMarker) == aws.ToString(in.PartNumberMarker) {
			return parts, nil
		}
		in.PartNumberMarker = out.NextPartNumberMarker
	}
}

// completedParts turns listed parts into the list CompleteMultipartUpload
// takes: number, ETag and whichever checksum the part has (an upload
// started with a checksum algorithm must be completed with each part's).
func completedParts(parts []types.Part) []types.CompletedPart {
	out := make([]types.CompletedPart, len(parts))
	for i, p := range parts {
		out[i] = types.CompletedPart{
			PartNumber:        p.PartNumber,
			ETag:              p.ETag,
			ChecksumCRC32:     p.ChecksumCRC32,
			ChecksumCRC32C:    p.ChecksumCRC32C,
			ChecksumCRC64NVME: p.ChecksumCRC64NVME,
			ChecksumSHA1:      p.ChecksumSHA1,
			ChecksumSHA256:    p.ChecksumSHA256,
		}
	}
	return out
}

// abortUpload aborts an upload; one already gone is no error.
func (t *Target) abortUpload(ctx context.Context, key, id string) error {
	err := callErr(ctx, t, func(ctx context.Context) error {
		_, err := t.s3.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
			Bucket: aws.String(t.name), Key: aws.String(key), UploadId: aws.String(id),
		})
		return err
	})
	if err != nil && !isNoSuchUpload(err) {
		return err
	}
	return nil
}

// uploads lists the in-progress uploads whose keys start with prefix, in
// key order.
func (t *Target) uploads(ctx context.Context, prefix string) ([]upload, error) {
	var ups []upload
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(t.name), Prefix: aws.String(prefix)}
	for {
		out, err := call(ctx, t, func(ctx context.Context) (*s3.ListMultipartUploadsOutput, error) {
			return t.s3.ListMultipartUploads(ctx, in)
		})
		if err != nil {
			return nil, err
		}
		for _, u := range out.Uploads {
			ups = append(ups, upload{key: aws.ToString(u.Key), id: aws.ToString(u.UploadId), initiated: aws.ToTime(u.Initiated)})
		}
		if !aws.ToBool(out.IsTruncated) {
			return ups, nil
		}
		next := &s3.ListMultipartUploadsInput{Bucket: in.Bucket, Prefix: in.Prefix,
			KeyMarker: out.NextKeyMarker, UploadIdMarker: out.NextUploadIdMarker}
		if aws.ToString(next.KeyMarker) == aws.ToString(in.KeyMarker) &&
			aws.ToString(next.UploadIdMarker) == aws.ToString(in.UploadIdMarker) {
			return ups, nil // a store that paginates wrongly must not loop forever
		}
		in = next
	}
}

// uploadsOf lists the in-progress uploads of exactly key.
func (t *Target) uploadsOf(ctx context.Context, key string) ([]upload, error) {
	all, err := t.uploads(ctx, key)
	if err != nil {
		return nil, err
	}
	var ups []upload
	for _, u := range all {
		if u.key == key {
			ups = append(ups, u)
		}
	}
	return ups, nil
}

// abortStrays aborts every upload of key once its part is complete:
// none of them can ever complete. What it cannot abort (the store failed
// or is slow) stays for the next reconcile: the part is complete either
// way.
func (t *Target) abortStrays(ctx context.Context, key string) {
	ups, err := t.uploadsOf(ctx, key)
	if err != nil {
		return
	}
	for _, u := range ups {
		if err := t.abortUpload(ctx, key, u.id); err != nil {
			return
		}
	}
}

// isPreconditionFailed reports a refused conditional request (412).
func isPreconditionFailed(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "PreconditionFailed" {
		return true
	}
	var re *smithyhttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusPreconditionFailed
}

// isNoSuchUpload reports an upload that does not exist (any more).
func isNoSuchUpload(err error) bool {
	var nsu *types.NoSuchUpload
	if errors.As(err, &nsu) {
		return true
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "NoSuchUpload"
}

// isNoSuchKey reports an object that does not exist.
func isNoSuchKey(err error) bool {
	var nsk *types.NoSuchKey
	return errors.As(err, &nsk)
}
