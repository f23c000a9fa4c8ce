package lineage

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/databrew/databrew-stage/config"
)

// LocalNamespace is the dataset namespace of a local folder.
const LocalNamespace = "file"

// DatasetName returns the OpenLineage namespace and name of an export root
// (config.Config.Output), after the naming conventions: a local folder is
// namespace "file" and its absolute path; an object-storage URL is its
// scheme and bucket or container (s3://bucket, gs://bucket,
// azblob://container) and its prefix without the leading slash, "/" for
// the bucket's root. The URL's query (endpoint, region) is left out: it
// says how to reach the store, not which data it is.
func DatasetName(output string) (namespace, name string, err error) {
	if output == "" {
		return "", "", errors.New("dataset name: the config has no output")
	}
	if !config.IsObjectStore(output) {
		abs, err := filepath.Abs(output)
		if err != nil {
			return "", "", fmt.Errorf("dataset name of %q: %w", output, err)
		}
		return LocalNamespace, abs, nil
	}
	u, err := url.Parse(output)
	if err != nil {
		return "", "", fmt.Errorf("dataset name of %q: %w", output, err)
	}
	if u.Scheme == "" || u.Host == "" {
		return "", "", fmt.Errorf("dataset name of %q: want scheme://bucket/prefix", output)
	}
	name = strings.Trim(u.Path, "/")
	if name == "" {
		name = "/"
	}
	return strings.ToLower(u.Scheme) + "://" + u.Host, name, nil
}
