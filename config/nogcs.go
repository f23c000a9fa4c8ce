//go:build !gcs

package config

// GCSBuilt says whether this binary was built with -tags gcs, which
// compiles in Google Cloud Storage: without it a gs:// output is a config
// error.
const GCSBuilt = false
