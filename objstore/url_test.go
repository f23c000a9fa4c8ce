package objstore

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		raw, bucketURL, prefix string
	}{
		{"s3://lake", "s3://lake", ""},
		{"s3://lake/", "s3://lake", ""},
		{"s3://lake/exports", "s3://lake", "exports/"},
		{"s3://lake/exports/", "s3://lake", "exports/"},
		{"s3://lake/a/b/c", "s3://lake", "a/b/c/"},
		{"s3://lake/shop%20x/", "s3://lake", "shop x/"},
		{"s3://lake/p?region=eu-west-1", "s3://lake?region=eu-west-1", "p/"},
		{
			"s3://bucket/prefix?endpoint=http://127.0.0.1:9000&use_path_style=true&region=us-east-1&disable_https=true",
			"s3://bucket?endpoint=http://127.0.0.1:9000&use_path_style=true&region=us-east-1&disable_https=true",
			"prefix/",
		},
		{"S3://lake/p", "s3://lake", "p/"},
		{"gs://lake/p/q", "gs://lake", "p/q/"},
		{"azblob://container/p", "azblob://container", "p/"},
	} {
		// gs is parsed only when its driver is compiled in.
		scheme, _, _ := strings.Cut(strings.ToLower(tc.raw), "://")
		if _, ok := drivers[scheme]; !ok {
			continue
		}
		loc, err := parseURL(tc.raw)
		if err != nil {
			t.Errorf("parseURL(%q): %v", tc.raw, err)
			continue
		}
		if loc.bucketURL != tc.bucketURL || loc.prefix != tc.prefix {
			t.Errorf("parseURL(%q) = %q, %q; want %q, %q", tc.raw, loc.bucketURL, loc.prefix, tc.bucketURL, tc.prefix)
		}
	}
}

func TestParseURLRejects(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"s3://", "no bucket"},
		{"s3:///prefix", "no bucket"},
		{"s3://lake//p", "empty, . or .. segments"},
		{"s3://lake/a/../b", "empty, . or .. segments"},
		{"s3://lake/./b", "empty, . or .. segments"},
		{"s3://key:secret@lake/p", "credentials do not belong in the URL"},
		{"s3://lake/p?prefix=q", `parameter "prefix"`},
		{"s3://lake/p#x", "fragment"},
		{"s3://lake/a%01b", "control character"},
	} {
		_, err := parseURL(tc.raw)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseURL(%q) = %v; want an error with %q", tc.raw, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("parseURL(%q) = %v: the error repeats the URL's password", tc.raw, err)
		}
	}
}

func TestOpenUnknownScheme(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"file:///tmp/out", `unsupported output scheme "file": supported are `},
		{"/srv/exports", "not a URL; supported are "},
		{"ftp://host/p", `"ftp"`},
		{"gs://lake/p", "-tags gcs"},
	} {
		scheme, _, _ := strings.Cut(tc.raw, "://")
		if _, ok := drivers[scheme]; ok {
			continue // built with the tag: gs:// is supported
		}
		_, err := Open(context.Background(), tc.raw)
		if !errors.Is(err, ErrScheme) {
			t.Errorf("Open(%q) = %v; want ErrScheme", tc.raw, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.want) || !strings.Contains(msg, tc.raw) ||
			!strings.Contains(msg, "s3://") || !strings.Contains(msg, "azblob://") {
			t.Errorf("Open(%q): %q; want it to name the URL, the built-in schemes and %q", tc.raw, msg, tc.want)
		}
	}
}

// TestParseURLExported: ParseURL splits as Open does and names the URL as
// its caller says.
func TestParseURLExported(t *testing.T) {
	loc, err := ParseURL("warehouse", "s3://lake/a/b?region=eu-west-1&use_path_style=true")
	if err != nil || loc.Scheme != "s3" || loc.Bucket != "lake" || loc.Prefix != "a/b/" ||
		loc.Query.Get("region") != "eu-west-1" || loc.Query.Get("use_path_style") != "true" {
		t.Errorf("ParseURL = %+v, %v", loc, err)
	}
	if _, err := ParseURL("warehouse", "s3:///p"); err == nil || !strings.Contains(err.Error(), `warehouse "s3:///p": no bucket`) {
		t.Errorf("ParseURL of no bucket = %v; want it to name the warehouse", err)
	}
	if _, err := parseURL("s3:///p"); err == nil || !strings.Contains(err.Error(), `output "s3:///p": no bucket`) {
		t.Errorf("parseURL of no bucket = %v; want it to name the output", err)
	}
}
