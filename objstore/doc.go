// Package objstore holds the object-storage primitives the export needs to
// publish into a bucket exactly once, as it does into a local folder: create
// part objects that no reader sees until the commit, create-only commit
// writes, and the listing, aborting and deleting a reconcile needs after a
// crash.
//
// An output is a URL: s3://bucket/prefix?params, gs://bucket/prefix or
// azblob://container/prefix. The path is the key prefix every object of the
// output lives under; the rest is opened with gocloud.dev/blob, so the query
// parameters are gocloud's (for S3: endpoint, region, profile,
// use_path_style, disable_https, request_checksum_calculation, ...).
// Credentials come from the ordinary environment of each cloud: AWS_*
// variables and profiles, Google application default credentials,
// AZURE_STORAGE_* variables. ParseURL checks such a URL as Open does
// without opening it, for another user of the same form (an Iceberg
// warehouse).
//
// On S3 a part is a multipart upload left uncompleted until the commit
// completes it with If-None-Match: *, so the part is invisible to every
// reader until then and never overwrites an object (HidesParts is true).
// Through gocloud, Google Cloud Storage and Azure Blob Storage have no such
// hidden state: there a part is written whole, create-only, and is visible
// once finished, so readers must rely on _SUCCESS and the manifest.
//
// The S3 and Azure Blob Storage drivers are always compiled in. The Google
// Cloud Storage driver adds about 30 MiB to the binary, so it is behind a
// build tag: build with -tags gcs for gs://.
//
// Target.Storage gives the output as publish.Storage, the storage port of
// the publish protocol, which passes the port's conformance suite.
//
// Every key and prefix a Target's methods take is a full key in the bucket,
// as Key returns it, and must lie under the output's prefix.
package objstore
