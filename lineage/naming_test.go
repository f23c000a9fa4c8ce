package lineage

import (
	"path/filepath"
	"testing"
)

func TestDatasetName(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("lake", "books"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ output, namespace, name string }{
		{abs, "file", abs},
		{"s3://lake/crawls/books?region=eu-west-1&endpoint=http://127.0.0.1:9000", "s3://lake", "crawls/books"},
		{"s3://lake", "s3://lake", "/"},
		{"S3://Lake/x/", "s3://Lake", "x"},
		{"gs://bucket/prefix", "gs://bucket", "prefix"},
		{"azblob://container/a/b?protocol=http", "azblob://container", "a/b"},
	}
	for _, tt := range tests {
		ns, name, err := DatasetName(tt.output)
		if err != nil || ns != tt.namespace || name != tt.name {
			t.Errorf("DatasetName(%q) = %q, %q, %v; want %q, %q", tt.output, ns, name, err, tt.namespace, tt.name)
		}
	}
	for _, bad := range []string{"", "s3:///prefix", "s3://%zz/x"} {
		if ns, name, err := DatasetName(bad); err == nil {
			t.Errorf("DatasetName(%q) = %q, %q; want an error", bad, ns, name)
		}
	}
}
