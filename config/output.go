package config

import (
	"net/url"
	"strings"
)

// ObjectStoreSchemes are the URL schemes output accepts besides a local
// folder: S3 and S3-compatible stores, Google Cloud Storage, Azure Blob.
var ObjectStoreSchemes = []string{"s3", "gs", "azblob"}

// IsObjectStore reports whether an output (Config.Output) is an
// object-storage URL rather than a local folder.
func IsObjectStore(output string) bool {
	return strings.Contains(output, "://") && !IsIceberg(output)
}

// output resolves the output key: a local path (file:///abs/path too), or
// an object-storage URL kept as written, minus a trailing slash.
func (v *validator) output(raw, name string) string {
	if IsIceberg(raw) {
		return v.icebergOutput(raw)
	}
	if !IsObjectStore(raw) {
		return v.path("output", raw, defaultOutputRoot, name)
	}
	u, err := url.Parse(raw)
	if err != nil {
		v.errorf("output", "not a URL: %v", err)
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "file":
		if u.Host != "" && u.Host != "localhost" {
			v.errorf("output", "%q names host %q: a file URL is a local path (file:///path)", raw, u.Host)
			return ""
		}
		return v.path("output", u.Path, defaultOutputRoot, name)
	case !isObjectScheme(scheme):
		v.errorf("output", "unknown scheme %q in %q: use a local path, or s3://, gs://, azblob:// or iceberg://", u.Scheme, raw)
	case scheme == "gs" && !GCSBuilt:
		v.errorf("output", "%q: gs:// needs a binary built with GCS: make build-gcs, or go build -tags gcs ./cmd/databrew-stage", raw)
	case u.Host == "":
		v.errorf("output", "%q names no bucket: write it as %s://bucket/prefix", raw, scheme)
	case u.User != nil:
		v.errorf("output", "the URL holds credentials: give them through the environment (AWS_* variables, profiles), never in the config")
	case u.Fragment != "":
		v.errorf("output", "%q has a fragment (#...): remove it", raw)
	case strings.Contains(u.Path, "//") || hasDotSegment(u.Path):
		v.errorf("output", "the prefix %q of %q must not hold empty, \".\" or \"..\" segments", u.Path, raw)
	default:
		u.Scheme = scheme
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawPath = ""
		return u.String()
	}
	return ""
}

func isObjectScheme(s string) bool {
	for _, o := range ObjectStoreSchemes {
		if s == o {
			return true
		}
	}
	return false
}

// hasDotSegment reports whether a URL path holds a "." or ".." segment.
func hasDotSegment(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}
