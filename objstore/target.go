package objstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob" // registers s3:// with gocloud
)

// ErrScheme is wrapped by Open's error for an output URL whose scheme this
// binary does not support.
var ErrScheme = errors.New("unsupported output scheme")

// ErrExists is wrapped by the error of a create-only write (CreatePart,
// Part.Finish, CompletePart) that found another object at its key. The
// existing object is left as it was.
var ErrExists = errors.New("object already exists")

// driver opens one scheme's buckets.
type driver struct {
	// hidesParts says whether a part is invisible to readers until
	// CompletePart.
	hidesParts bool
	// open opens the bucket URL scheme://bucket?params.
	open func(ctx context.Context, bucketURL string) (*blob.Bucket, error)
}

// drivers holds the schemes compiled into this binary; azure.go adds
// azblob, and the file behind the gcs build tag adds gs.
var drivers = map[string]driver{
	"s3": {hidesParts: true, open: blob.OpenBucket},
}

// taggedSchemes names the build tag each optional scheme needs.
var taggedSchemes = map[string]string{"gs": "gcs"}

// Target is one output in object storage: a bucket and a key prefix. Its
// methods may be called from several goroutines.
type Target struct {
	url    string
	scheme string
	name   string // the bucket or container
	prefix string
	hides  bool
	bucket *blob.Bucket
	// callTimeout bounds each request to the store (Options.CallTimeout).
	callTimeout time.Duration
	// unanswered says the last request that ended was ended by its call
	// timeout (see Unanswered).
	unanswered atomic.Bool

	// S3 only: the client under gocloud's bucket, for multipart uploads,
	// and the upload settings gocloud applies to its own writes.
	s3       *s3.Client
	checksum types.ChecksumAlgorithm
	sse      types.ServerSideEncryption
	kmsKeyID string
}

// location is an output URL split into what gocloud opens and the prefix.
type location struct {
	scheme    string
	bucket    string
	bucketURL string // scheme://bucket?params
	prefix    string // "" or "a/b/"
	query     url.Values
}

// parseURL splits an output URL into its bucket URL and key prefix. The
// prefix is the path without its leading slash, ending in "/" when it is
// not empty.
func parseURL(raw string) (location, error) { return parseURLOf("output", raw) }

// parseURLOf is parseURL for a URL that errors call what (such as
// "output").
func parseURLOf(what, raw string) (location, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return location{}, fmt.Errorf("%s %q: %w", what, raw, err)
	}
	if u.Scheme == "" || u.Opaque != "" {
		return location{}, schemeError(what, raw, u.Scheme)
	}
	if _, ok := drivers[u.Scheme]; !ok {
		return location{}, schemeError(what, raw, u.Scheme)
	}
	if u.User != nil {
		// Said without them: an error may end up in a log.
		return location{}, fmt.Errorf("%s %q: credentials do not belong in the URL: use the environment", what, u.Redacted())
	}
	if u.Host == "" {
		return location{}, fmt.Errorf("%s %q: no bucket: write %s://bucket/prefix", what, raw, u.Scheme)
	}
	if u.Fragment != "" {
		return location{}, fmt.Errorf("%s %q: a fragment (#...) has no meaning here", what, raw)
	}
	q := u.Query()
	for _, k := range []string{"prefix", "key"} {
		if q.Has(k) {
			return location{}, fmt.Errorf("%s %q: parameter %q: give the key prefix as the URL's path", what, raw, k)
		}
	}
	prefix := strings.TrimPrefix(u.Path, "/")
	if prefix != "" {
		for _, seg := range strings.Split(strings.TrimSuffix(prefix, "/"), "/") {
			if seg == "" || seg == "." || seg == ".." {
				return location{}, fmt.Errorf("%s %q: the path may not have empty, . or .. segments", what, raw)
			}
		}
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if err := checkKeyText(prefix); err != nil {
			return location{}, fmt.Errorf("%s %q: %w", what, raw, err)
		}
	}
	b := url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: u.RawQuery}
	return location{scheme: u.Scheme, bucket: u.Host, bucketURL: b.String(), prefix: prefix, query: q}, nil
}

// schemeError explains an output URL this binary cannot open.
func schemeError(what, raw, scheme string) error {
	var have []string
	for s := range drivers {
		have = append(have, s+"://")
	}
	slices.Sort(have)
	msg := fmt.Sprintf("%s %q: %v %q: supported are %s", what, raw, ErrScheme, scheme, strings.Join(have, ", "))
	if scheme == "" {
		msg = fmt.Sprintf("%s %q: %v: not a URL; supported are %s", what, raw, ErrScheme, strings.Join(have, ", "))
	}
	if tag, ok := taggedSchemes[scheme]; ok {
		msg += fmt.Sprintf(" (%s:// needs a binary built with -tags %s)", scheme, tag)
	}
	return fmt.Errorf("%s%w", msg, silent{ErrScheme})
}

// silent wraps an error for errors.Is without adding to the message.
type silent struct{ err error }

func (s silent) Error() string { return "" }
func (s silent) Unwrap() error { return s.err }

// Options are what a caller sets of a Target beyond its URL.
type Options struct {
	// CallTimeout bounds each request to the store, from its start to
	// the end of its answer, retries included: one that does not end in
	// time fails with an error wrapping ErrTimeout and naming the
	// endpoint. Requests that undo something after the caller's context
	// ended get it too. 0 means DefaultCallTimeout.
	CallTimeout time.Duration
}

// Open opens the output at rawURL with the default Options: see OpenWith.
func Open(ctx context.Context, rawURL string) (*Target, error) {
	return OpenWith(ctx, rawURL, Options{})
}

// OpenWith opens the output at rawURL: s3://bucket[/prefix][?params],
// gs://bucket[/prefix] or azblob://container[/prefix]. It does not
// contact the store (except that a driver may look up credentials); call
// Preflight for that. An unknown scheme gives an error wrapping ErrScheme.
func OpenWith(ctx context.Context, rawURL string, opts Options) (*Target, error) {
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	loc, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	d := drivers[loc.scheme]
	b, err := d.open(ctx, loc.bucketURL)
	if err != nil {
		var ue *UnusableError
		if errors.As(err, &ue) {
			ue.URL = rawURL
			return nil, ue
		}
		return nil, fmt.Errorf("open output %q: %w", rawURL, err)
	}
	t := &Target{url: rawURL, scheme: loc.scheme, name: loc.bucket, prefix: loc.prefix, hides: d.hidesParts, bucket: b,
		callTimeout: opts.CallTimeout}
	if loc.scheme == "s3" {
		if err := t.initS3(loc); err != nil {
			b.Close()
			return nil, fmt.Errorf("open output %q: %w", rawURL, err)
		}
	}
	return t, nil
}

// initS3 takes the S3 client from gocloud's bucket and the upload settings
// gocloud read from the URL, so multipart uploads match gocloud's writes.
func (t *Target) initS3(loc location) error {
	var c *s3.Client
	if !t.bucket.As(&c) {
		return errors.New("gocloud's S3 bucket exposes no *s3.Client")
	}
	t.s3 = c
	if c.Options().RequestChecksumCalculation != aws.RequestChecksumCalculationWhenRequired {
		// As the AWS SDK's transfer manager does: CRC32 for every part,
		// unless the URL asks for checksums only when required (as some
		// S3-compatible stores need).
		t.checksum = types.ChecksumAlgorithmCrc32
	}
	if v := loc.query.Get("ssetype"); v != "" {
		for _, s := range types.ServerSideEncryptionAes256.Values() {
			if strings.EqualFold(string(s), v) {
				t.sse = s
			}
		}
	}
	t.kmsKeyID = loc.query.Get("kmskeyid")
	return nil
}

// URL is the output URL as it was given to Open.
func (t *Target) URL() string { return t.url }

// Prefix is the key prefix of the output: "" for a whole bucket, else a
// path ending in "/".
func (t *Target) Prefix() string { return t.prefix }

// Key is the full key of rel, a path relative to the output's prefix.
func (t *Target) Key(rel string) string { return t.prefix + rel }

// HidesParts reports whether a part stays invisible to readers (not
// listed, not readable) until CompletePart: true on S3, where it is an
// uncompleted multipart upload; false on the other stores, where a part
// is visible once finished and readers must rely on _SUCCESS and the
// manifest.
func (t *Target) HidesParts() bool { return t.hides }

// Close releases the bucket's resources.
func (t *Target) Close() error {
	if err := t.bucket.Close(); err != nil {
		return fmt.Errorf("close output %q: %w", t.url, err)
	}
	return nil
}

// checkKey rejects a key outside the output's prefix, and one gocloud
// would escape (control characters, "../"), since multipart uploads go to
// the S3 client under gocloud, which does not escape.
func (t *Target) checkKey(key string) error {
	if key == "" || !strings.HasPrefix(key, t.prefix) {
		return fmt.Errorf("output %q: key %q is not under the output's prefix %q", t.url, key, t.prefix)
	}
	if err := checkKeyText(key); err != nil {
		return fmt.Errorf("output %q: %w", t.url, err)
	}
	return nil
}

// checkPrefix is checkKey for a prefix, which may be the output's own.
func (t *Target) checkPrefix(prefix string) error {
	if !strings.HasPrefix(prefix, t.prefix) {
		return fmt.Errorf("output %q: prefix %q is not under the output's prefix %q", t.url, prefix, t.prefix)
	}
	if err := checkKeyText(prefix); err != nil {
		return fmt.Errorf("output %q: %w", t.url, err)
	}
	return nil
}

// checkKeyText rejects keys that are not plain UTF-8 paths.
func checkKeyText(key string) error {
	if !utf8.ValidString(key) {
		return fmt.Errorf("key %q is not valid UTF-8", key)
	}
	for _, r := range key {
		if r < 32 || r == 127 {
			return fmt.Errorf("key %q has a control character", key)
		}
	}
	if strings.Contains(key, "../") {
		return fmt.Errorf("key %q has a ../ segment", key)
	}
	return nil
}
