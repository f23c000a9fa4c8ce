package objstore

import "net/url"

// Location is an object-storage URL split as Open splits an output URL.
type Location struct {
	// Scheme is the URL's scheme in lower case: "s3", "azblob" or "gs".
	Scheme string
	// Bucket is the bucket (or container).
	Bucket string
	// Prefix is the key prefix: "" for the whole bucket, else the URL's
	// path without its leading slash, ending in "/".
	Prefix string
	// Query holds the URL's query parameters (for S3: endpoint, region,
	// use_path_style, disable_https, ...), which Open hands to the
	// store's client.
	Query url.Values
}

// ParseURL splits rawURL as Open does, refusing what Open refuses (a scheme
// this binary lacks, credentials in the URL, no bucket, a fragment, a
// prefix or key parameter, empty, "." or ".." path segments), without
// opening anything. Errors name the URL as what's, such as "warehouse".
// The query parameters are not checked: the store's client does that.
func ParseURL(what, rawURL string) (Location, error) {
	loc, err := parseURLOf(what, rawURL)
	if err != nil {
		return Location{}, err
	}
	return Location{Scheme: loc.scheme, Bucket: loc.bucket, Prefix: loc.prefix, Query: loc.query}, nil
}
