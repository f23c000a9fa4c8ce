package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// CompletePart makes the part at key visible, create-only: on S3 it
// completes the multipart upload uploadID of key (or, when uploadID is
// empty, the one upload of key holding size bytes) with If-None-Match: *,
// after checking that its uploaded parts add up to size bytes. It is nil when
// the part is already complete (no upload left, and the object holds size
// bytes), which is how a reconcile rolls forward a commit a crash cut
// short. It fails with an error wrapping ErrExists when another object
// holds the key (left as it was), and with one wrapping fs.ErrNotExist
// when there is neither an upload nor an object. Elsewhere, where Finish
// already created the object, it only checks the object's size.
//
// Once the part is complete, every other upload of key is aborted (on a
// best-effort basis): none can ever complete, since the key is taken and
// completions are create-only. A client's retry of a start whose answer
// was lost leaves such an upload.
func (t *Target) CompletePart(ctx context.Context, key, uploadID string, size int64) error {
	if err := t.checkKey(key); err != nil {
		return err
	}
	if t.s3 == nil {
		return t.checkCompleted(ctx, key, size, false)
	}
	if err := t.completePart(ctx, key, uploadID, size); err != nil {
		return err
	}
	t.abortStrays(ctx, key)
	return nil
}

// completePart is CompletePart on S3, but for the strays.
func (t *Target) completePart(ctx context.Context, key, uploadID string, size int64) error {
	ups := []upload{{key: key, id: uploadID}}
	if uploadID == "" {
		var err error
		if ups, err = t.uploadsOf(ctx, key); err != nil {
			return fmt.Errorf("output %s: complete part %q: list uploads: %w", t.url, key, err)
		}
	}
	var match []upload
	var parts [][]types.Part
	var sizes []int64
	for _, u := range ups {
		ps, err := t.listParts(ctx, key, u.id)
		if isNoSuchUpload(err) {
			continue // completed or aborted meanwhile
		}
		if err != nil {
			return fmt.Errorf("output %s: complete part %q: list parts: %w", t.url, key, err)
		}
		var n int64
		for _, p := range ps {
			n += aws.ToInt64(p.Size)
		}
		sizes = append(sizes, n)
		if n == size && len(ps) > 0 {
			match = append(match, u)
			parts = append(parts, ps)
		}
	}
	switch len(match) {
	case 0:
		return t.checkCompleted(ctx, key, size, len(sizes) > 0)
	case 1:
	default:
		return fmt.Errorf("output %s: complete part %q: %d uploads of %d bytes each; cannot tell which is the part", t.url, key, len(match), size)
	}
	u := match[0]
	err := t.completeUpload(ctx, key, u.id, parts[0])
	switch {
	case err == nil:
		return nil
	case isPreconditionFailed(err), isNoSuchUpload(err):
		// The SDK retries a request whose answer was lost; the retry of a
		// completion that went through finds the upload gone, or the key
		// taken (by this very upload). Both are success when the upload
		// is gone and the object has the part's size; an upload still
		// there means another object holds the key.
		if _, lerr := t.listParts(ctx, key, u.id); lerr == nil {
			return fmt.Errorf("output %s: complete part %q: %w: %w", t.url, key, ErrExists, err)
		} else if !isNoSuchUpload(lerr) {
			return fmt.Errorf("output %s: complete part %q: %w", t.url, key, errors.Join(err, lerr))
		}
		return t.checkCompleted(ctx, key, size, false)
	default:
		return fmt.Errorf("output %s: complete part %q: %w", t.url, key, err)
	}
}

// checkCompleted is CompletePart's answer when no upload of key holds
// size bytes: nil if the object is there with that size. sizeMismatch
// says an upload was found whose parts add up to another size.
func (t *Target) checkCompleted(ctx context.Context, key string, size int64, sizeMismatch bool) error {
	n, exists, err := t.Stat(ctx, key)
	switch {
	case err != nil:
		return fmt.Errorf("output %s: complete part %q: %w", t.url, key, err)
	case exists && n == size:
		return nil
	case exists:
		return fmt.Errorf("output %s: complete part %q: %w with %d bytes, not %d", t.url, key, ErrExists, n, size)
	case sizeMismatch:
		return fmt.Errorf("output %s: complete part %q: its upload does not hold %d bytes", t.url, key, size)
	default:
		return fmt.Errorf("output %s: complete part %q: no upload and no object: %w", t.url, key, fs.ErrNotExist)
	}
}

// PutIfAbsent writes data at key unless an object is there: created is
// false, and the object is left as it was, when one is (412 on S3).
func (t *Target) PutIfAbsent(ctx context.Context, key string, data []byte) (created bool, err error) {
	if err := t.checkKey(key); err != nil {
		return false, err
	}
	err = callErr(ctx, t, func(ctx context.Context) error {
		return t.bucket.WriteAll(ctx, key, data, &blob.WriterOptions{IfNotExist: true, ContentType: typeOf(key)})
	})
	if err == nil {
		return true, nil
	}
	if errors.Is(wrapExists(err), ErrExists) {
		return false, nil
	}
	return false, fmt.Errorf("output %s: write %q: %w", t.url, key, err)
}

// Put writes data at key, replacing any object there (for the output's
// latest _verdict.json).
func (t *Target) Put(ctx context.Context, key string, data []byte) error {
	if err := t.checkKey(key); err != nil {
		return err
	}
	err := callErr(ctx, t, func(ctx context.Context) error {
		return t.bucket.WriteAll(ctx, key, data, &blob.WriterOptions{ContentType: typeOf(key)})
	})
	if err != nil {
		return fmt.Errorf("output %s: write %q: %w", t.url, key, err)
	}
	return nil
}

// typeOf is the content type of the small files the export writes.
func typeOf(key string) string {
	if strings.HasSuffix(key, ".json") {
		return "application/json"
	}
	return contentType
}

// Stat gives the size of the object at key, and whether it exists. An
// uncompleted upload is no object.
func (t *Target) Stat(ctx context.Context, key string) (size int64, exists bool, err error) {
	if err := t.checkKey(key); err != nil {
		return 0, false, err
	}
	a, err := call(ctx, t, func(ctx context.Context) (*blob.Attributes, error) { return t.bucket.Attributes(ctx, key) })
	if gcerrors.Code(err) == gcerrors.NotFound {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("output %s: stat %q: %w", t.url, key, err)
	}
	return a.Size, true, nil
}

// Read returns the object at key; a missing one gives an error wrapping
// fs.ErrNotExist.
func (t *Target) Read(ctx context.Context, key string) ([]byte, error) {
	if err := t.checkKey(key); err != nil {
		return nil, err
	}
	data, err := call(ctx, t, func(ctx context.Context) ([]byte, error) {
		if t.s3 != nil {
			return t.readS3(ctx, key)
		}
		return t.bucket.ReadAll(ctx, key)
	})
	if gcerrors.Code(err) == gcerrors.NotFound || isNoSuchKey(err) {
		return nil, fmt.Errorf("output %s: read %q: %w", t.url, key, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("output %s: read %q: %w", t.url, key, err)
	}
	return data, nil
}

// ListKeys lists the keys of the objects under prefix, at any depth, in
// key order. Uncompleted uploads are not objects and are not listed.
func (t *Target) ListKeys(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	err := t.eachKey(ctx, prefix, func(key string) bool {
		keys = append(keys, key)
		return true
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(keys)
	return keys, nil
}

// HasKey reports whether an object under prefix, at any depth, has a key
// that match accepts; the listing stops at the first.
func (t *Target) HasKey(ctx context.Context, prefix string, match func(key string) bool) (bool, error) {
	found := false
	err := t.eachKey(ctx, prefix, func(key string) bool {
		found = match(key)
		return !found
	})
	return found, err
}

// eachKey calls fn with the key of each object under prefix, in the
// store's listing order, while fn returns true.
func (t *Target) eachKey(ctx context.Context, prefix string, fn func(key string) bool) error {
	if err := t.checkPrefix(prefix); err != nil {
		return err
	}
	it := t.bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := call(ctx, t, it.Next)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("output %s: list %q: %w", t.url, prefix, err)
		}
		if !fn(obj.Key) {
			return nil
		}
	}
}

// ListUploads lists the keys of the multipart uploads in progress under
// prefix, one entry per upload, in key order. Only S3 has them: elsewhere
// the list is empty.
func (t *Target) ListUploads(ctx context.Context, prefix string) ([]string, error) {
	if err := t.checkPrefix(prefix); err != nil {
		return nil, err
	}
	if t.s3 == nil {
		return nil, nil
	}
	ups, err := t.uploads(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("output %s: list uploads under %q: %w", t.url, prefix, err)
	}
	keys := make([]string, len(ups))
	for i, u := range ups {
		keys[i] = u.key
	}
	slices.Sort(keys)
	return keys, nil
}

// AbortUploads aborts the multipart uploads in progress under prefix
// whose keys own accepts, and returns how many it aborted (an upload that
// vanished meanwhile is not counted). own is given a key relative to the
// output's prefix, and must accept only keys the caller's protocol could
// have written: the bucket is shared, and at its root every other
// application's uploads are under the output too. Only S3 has uploads:
// elsewhere it returns 0.
func (t *Target) AbortUploads(ctx context.Context, prefix string, own func(rel string) bool) (int, error) {
	if err := t.checkPrefix(prefix); err != nil {
		return 0, err
	}
	if t.s3 == nil {
		return 0, nil
	}
	ups, err := t.uploads(ctx, prefix)
	if err != nil {
		return 0, fmt.Errorf("output %s: list uploads under %q: %w", t.url, prefix, err)
	}
	n := 0
	for _, u := range ups {
		if !own(strings.TrimPrefix(u.key, t.prefix)) {
			continue
		}
		err := callErr(ctx, t, func(ctx context.Context) error {
			_, err := t.s3.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(t.name), Key: aws.String(u.key), UploadId: aws.String(u.id),
			})
			return err
		})
		if isNoSuchUpload(err) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("output %s: abort upload of %q: %w", t.url, u.key, err)
		}
		n++
	}
	return n, nil
}

// DeletePrefix deletes every object under prefix, which must not be empty,
// and returns how many it deleted. It leaves multipart uploads alone (see
// AbortUploads).
func (t *Target) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if prefix == "" {
		return 0, fmt.Errorf("output %s: delete under an empty prefix: refusing to empty the bucket", t.url)
	}
	keys, err := t.ListKeys(ctx, prefix)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range keys {
		err := t.delete(ctx, k)
		if gcerrors.Code(err) == gcerrors.NotFound {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("output %s: delete %q: %w", t.url, k, err)
		}
		n++
	}
	return n, nil
}

// removeKey aborts every upload of exactly key and deletes its object;
// neither being there is no error.
func (t *Target) removeKey(ctx context.Context, key string) error {
	if err := t.checkKey(key); err != nil {
		return err
	}
	if t.s3 != nil {
		ups, err := t.uploadsOf(ctx, key)
		if err != nil {
			return fmt.Errorf("output %s: remove %q: list uploads: %w", t.url, key, err)
		}
		for _, u := range ups {
			if err := t.abortUpload(ctx, key, u.id); err != nil {
				return fmt.Errorf("output %s: remove %q: abort upload: %w", t.url, key, err)
			}
		}
	}
	err := t.delete(ctx, key)
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("output %s: remove %q: %w", t.url, key, err)
	}
	return nil
}

// delete deletes the object at key, one request under the call timeout.
func (t *Target) delete(ctx context.Context, key string) error {
	return callErr(ctx, t, func(ctx context.Context) error { return t.bucket.Delete(ctx, key) })
}

// completeUpload completes upload id of key with parts, create-only
// (If-None-Match: *), one request under the call timeout.
func (t *Target) completeUpload(ctx context.Context, key, id string, parts []types.Part) error {
	return callErr(ctx, t, func(ctx context.Context) error {
		_, err := t.s3.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
			Bucket:          aws.String(t.name),
			Key:             aws.String(key),
			UploadId:        aws.String(id),
			IfNoneMatch:     aws.String("*"),
			MultipartUpload: &types.CompletedMultipartUpload{Parts: completedParts(parts)},
		})
		return err
	})
}

// readS3 reads an object with the S3 client under gocloud, so that
// reading back a multipart object does not make the SDK log to stderr
// that it skipped validating its composite checksum. ctx must cover the
// reading of the body.
func (t *Target) readS3(ctx context.Context, key string) ([]byte, error) {
	out, err := t.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(t.name), Key: aws.String(key)},
		func(o *s3.Options) { o.DisableLogOutputChecksumValidationSkipped = true })
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// CheckPart reports whether the part at key can still be completed, or
// was: on S3, the multipart upload uploadID of key holds size bytes, or
// the object holds them. It fails with an error wrapping fs.ErrNotExist
// when neither is there (the upload was aborted, by a lifecycle rule
// say), and names the sizes when they differ. It changes nothing.
func (t *Target) CheckPart(ctx context.Context, key, uploadID string, size int64) error {
	if err := t.checkKey(key); err != nil {
		return err
	}
	if t.s3 != nil && uploadID != "" {
		ps, err := t.listParts(ctx, key, uploadID)
		switch {
		case err == nil:
			var n int64
			for _, p := range ps {
				n += aws.ToInt64(p.Size)
			}
			if n != size || len(ps) == 0 {
				return fmt.Errorf("output %s: part %q: its upload holds %d bytes, not %d", t.url, key, n, size)
			}
			return nil
		case !isNoSuchUpload(err):
			return fmt.Errorf("output %s: part %q: list parts: %w", t.url, key, err)
		}
	}
	return t.checkCompleted(ctx, key, size, false)
}

// ID names the output by what it is, whatever the spelling of its URL:
// scheme://bucket/prefix, without the URL's query and with one "/" at the
// end of a prefix.
func (t *Target) ID() string { return t.scheme + "://" + t.name + "/" + t.prefix }
