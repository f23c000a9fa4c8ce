package iceberg

import (
	"fmt"
	"net/url"
	"strings"
)

// ControlFolder is the folder under a table's location that holds the
// control files of the logical runs sharded into it (claims, decisions,
// the shards' manifests and verdicts). Iceberg readers never look there:
// they read what the table's metadata references.
const ControlFolder = "databrew"

// ControlOutput returns where the control files of the table's sharded
// runs go, as an output of the stage, given the table's location (see
// Location): a local folder path for a table in a file:// warehouse, an
// s3:// URL (with the warehouse's query: its endpoint and addressing) for
// one in S3.
func (t *Table) ControlOutput(location string) (string, error) {
	loc := strings.TrimSuffix(location, "/")
	u, err := url.Parse(loc)
	if err != nil {
		return "", fmt.Errorf("iceberg table %s: location %q: %w", t.Where(), loc, err)
	}
	switch u.Scheme {
	case "file":
		return u.Path + "/" + ControlFolder, nil
	case "s3", "s3a":
		w, err := url.Parse(t.o.Warehouse)
		if err != nil {
			return "", fmt.Errorf("warehouse: %w", err)
		}
		u.Scheme, u.Path, u.RawQuery = "s3", u.Path+"/"+ControlFolder, w.RawQuery
		return u.String(), nil
	}
	return "", fmt.Errorf("iceberg table %s: shards need a table in a file:// or s3:// location, not %s", t.Where(), loc)
}
