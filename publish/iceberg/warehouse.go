package iceberg

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // registers iceberg-go's S3 IO for s3:// locations

	"github.com/databrew/databrew-stage/objstore"
)

// Warehouse is a warehouse URL as the catalog takes it: a location, and
// the IO properties that reach the files under it.
type Warehouse struct {
	// Location is the warehouse without query parameters:
	// "file:///abs/path" or "s3://bucket/prefix" (no trailing slash). A
	// new table of the SQL catalog goes to Location/NAMESPACE.db/TABLE,
	// a location every Iceberg reader can open with its own S3 settings.
	Location string
	// Props are iceberg-go's S3 IO properties the URL's parameters give
	// (s3.endpoint, s3.region, s3.force-virtual-addressing); nil for a
	// file warehouse. They never hold credentials.
	Props iceberg.Properties
}

// s3Params are the query parameters of an s3:// output URL a warehouse
// takes too.
var s3Params = []string{"endpoint", "region", "use_path_style", "disable_https"}

// ParseWarehouse checks a warehouse URL and splits it into its location
// and IO properties. It takes "file:///abs/path" or an S3 URL as an
// s3:// output takes it (see objstore.ParseURL):
// "s3://bucket/prefix?endpoint=...&use_path_style=true&region=...&disable_https=true",
// whose parameters become s3.endpoint (with http:// when disable_https
// is true and the endpoint names no scheme), s3.region and
// s3.force-virtual-addressing (the opposite of use_path_style, false by
// default as for an output). Other parameters are refused: iceberg-go's
// S3 IO has no equivalent. Credentials are never in the URL: the AWS SDK
// reads them from the environment (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, profiles), as for an output.
func ParseWarehouse(raw string) (Warehouse, error) {
	if raw == "" {
		return Warehouse{}, errors.New(`no warehouse: set it to "file:///abs/path" or "s3://bucket/prefix?..."`)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Warehouse{}, fmt.Errorf("warehouse: %w", err)
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" || !filepath.IsAbs(u.Path) || u.RawQuery != "" || u.Fragment != "" {
			return Warehouse{}, fmt.Errorf(`warehouse %s: a file warehouse is "file:///abs/path", an absolute path`, raw)
		}
		return Warehouse{Location: raw}, nil
	case "s3":
		return parseS3Warehouse(raw)
	default:
		return Warehouse{}, fmt.Errorf("warehouse %s: a warehouse is file:///abs/path or s3://bucket/prefix, not %s://", raw, u.Scheme)
	}
}

// parseS3Warehouse is ParseWarehouse of an s3:// URL.
func parseS3Warehouse(raw string) (Warehouse, error) {
	loc, err := objstore.ParseURL("warehouse", raw)
	if err != nil {
		return Warehouse{}, err
	}
	q := loc.Query
	for k := range q {
		if !slices.Contains(s3Params, k) {
			return Warehouse{}, fmt.Errorf("warehouse %q: parameter %q is not supported for a warehouse (only %s): iceberg-go's S3 IO has no equivalent", raw, k, strings.Join(s3Params, ", "))
		}
		if len(q[k]) != 1 {
			return Warehouse{}, fmt.Errorf("warehouse %q: parameter %q given %d times", raw, k, len(q[k]))
		}
	}
	boolParam := func(k string) (bool, error) {
		if !q.Has(k) {
			return false, nil
		}
		b, err := strconv.ParseBool(q.Get(k))
		if err != nil {
			return false, fmt.Errorf("warehouse %q: parameter %s=%q is not true or false", raw, k, q.Get(k))
		}
		return b, nil
	}
	pathStyle, err := boolParam("use_path_style")
	if err != nil {
		return Warehouse{}, err
	}
	noHTTPS, err := boolParam("disable_https")
	if err != nil {
		return Warehouse{}, err
	}
	props := iceberg.Properties{icebergio.S3ForceVirtualAddressing: strconv.FormatBool(!pathStyle)}
	if r := q.Get("region"); r != "" {
		props[icebergio.S3Region] = r
	}
	switch ep := q.Get("endpoint"); {
	case ep != "":
		if !strings.Contains(ep, "://") {
			ep = map[bool]string{false: "https://", true: "http://"}[noHTTPS] + ep
		}
		e, err := url.Parse(ep)
		switch {
		case err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "":
			return Warehouse{}, fmt.Errorf("warehouse %q: endpoint %q is not an http:// or https:// URL", raw, q.Get("endpoint"))
		case noHTTPS && e.Scheme == "https":
			return Warehouse{}, fmt.Errorf("warehouse %q: endpoint %q is https:// but disable_https is true", raw, q.Get("endpoint"))
		}
		props[icebergio.S3EndpointURL] = ep
	case noHTTPS:
		return Warehouse{}, fmt.Errorf("warehouse %q: disable_https needs an endpoint (endpoint=http://host:port)", raw)
	}
	location := "s3://" + loc.Bucket
	if p := strings.TrimSuffix(loc.Prefix, "/"); p != "" {
		for _, seg := range strings.Split(p, "/") {
			if url.PathEscape(seg) != seg {
				return Warehouse{}, fmt.Errorf("warehouse %q: the prefix segment %q holds characters a file location would have to escape: use letters, digits and -._=+", raw, seg)
			}
		}
		location += "/" + p
	}
	return Warehouse{Location: location, Props: props}, nil
}
