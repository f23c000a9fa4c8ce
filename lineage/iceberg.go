package lineage

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/verdict"
)

// The schema URLs of the dataset facets an Iceberg output carries.
const (
	SymlinksFacetURL = "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json#/$defs/SymlinksDatasetFacet"
	VersionFacetURL  = "https://openlineage.io/spec/facets/1-0-0/DatasetVersionDatasetFacet.json#/$defs/DatasetVersionDatasetFacet"
	StorageFacetURL  = "https://openlineage.io/spec/facets/1-0-0/StorageDatasetFacet.json#/$defs/StorageDatasetFacet"
)

// SymlinkTable is the type of a symlinks identifier that names a table in
// a catalog.
const SymlinkTable = "TABLE"

// icebergDataset is the OpenLineage identity of an Iceberg table output.
//
// The naming conventions (https://openlineage.io/docs/spec/naming/) have
// no entry for Iceberg; the OpenLineage Spark integration, which names
// the Iceberg tables Spark jobs read and write, is the reference
// (integration/spark, IcebergHandler and its catalog type handlers): the
// dataset is the table's location, named as a path of its file system or
// object store (namespace "file" and the absolute path; s3://bucket and
// the key prefix), and a symlinks facet gives the table's name in its
// catalog, type TABLE (for a REST catalog: namespace the catalog's URI,
// name NAMESPACE.TABLE). The dataset's version (the DatasetVersion facet)
// is the id of the table's snapshot, as a decimal string, and the storage
// facet says iceberg and parquet.
//
// location is the table's location when a verdict says it; when it is
// empty (a START event comes before the table is opened), it is where
// the SQL catalog puts a new table: WAREHOUSE/NAMESPACE.db/TABLE. A REST
// catalog without a warehouse chooses its tables' locations itself: the
// dataset is then named by the catalog (namespace its URI, name
// NAMESPACE.TABLE), until a verdict says the location.
func icebergDataset(ic *config.Iceberg, location string) (namespace, name string, symlink SymlinkIdentifier, err error) {
	if ic == nil {
		return "", "", SymlinkIdentifier{}, errors.New("dataset name: an iceberg:// output without its [iceberg] table")
	}
	symlink = SymlinkIdentifier{Namespace: catalogNamespace(ic.URI), Name: ic.Namespace + "." + ic.Table, Type: SymlinkTable}
	if location == "" && ic.Warehouse != "" {
		wh, err := url.Parse(ic.Warehouse)
		if err != nil {
			return "", "", SymlinkIdentifier{}, fmt.Errorf("dataset name of warehouse %q: %w", ic.Warehouse, err)
		}
		wh.RawQuery, wh.Fragment = "", ""
		location = strings.TrimSuffix(wh.String(), "/") + "/" + ic.Namespace + ".db/" + ic.Table
	}
	if location == "" {
		return symlink.Namespace, symlink.Name, symlink, nil
	}
	namespace, name, err = LocationName(location)
	return namespace, name, symlink, err
}

// catalogNamespace is a catalog's URI as a dataset namespace: without
// its user, password, query and fragment, which say how to reach it, not
// which catalog it is.
func catalogNamespace(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme == "" {
		return uri
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// LocationName returns the OpenLineage namespace and name of a location
// URL, after the naming conventions: file:///abs/path is namespace "file"
// and the path; an object-storage URL is its scheme and bucket (s3://bucket)
// and the key prefix without the leading slash. The query is left out.
func LocationName(location string) (namespace, name string, err error) {
	u, err := url.Parse(location)
	if err != nil {
		return "", "", fmt.Errorf("dataset name of %q: %w", location, err)
	}
	if strings.EqualFold(u.Scheme, "file") {
		if u.Path == "" {
			return "", "", fmt.Errorf("dataset name of %q: no path", location)
		}
		return LocalNamespace, u.Path, nil
	}
	return DatasetName(location)
}

// SymlinkIdentifier is one identifier of the symlinks facet: another name
// of the same dataset.
type SymlinkIdentifier struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Type      string `json:"type"`
}

// SymlinksFacet is the symlinks dataset facet: the dataset's other names.
type SymlinksFacet struct {
	BaseFacet
	Identifiers []SymlinkIdentifier `json:"identifiers"`
}

// VersionFacet is the version dataset facet (DatasetVersionDatasetFacet):
// the version of the dataset a run wrote.
type VersionFacet struct {
	BaseFacet
	DatasetVersion string `json:"datasetVersion"`
}

// StorageFacet is the storage dataset facet: the table format (storage
// layer) and the data files' format.
type StorageFacet struct {
	BaseFacet
	StorageLayer string `json:"storageLayer"`
	FileFormat   string `json:"fileFormat,omitempty"`
}

// tableOutput returns out as the end event of a run names it, given the
// table object of the run's verdict: at the table's location when the
// verdict says it, with the snapshot the run committed as the dataset's
// version. out is returned as it is for an output that is no table.
func (t *Tracker) tableOutput(out OutputDataset, tbl *verdict.Table) OutputDataset {
	if tbl == nil || t.iceberg == nil {
		return out
	}
	if tbl.Location != "" {
		if ns, name, _, err := icebergDataset(t.iceberg, tbl.Location); err == nil {
			out.Namespace, out.Name = ns, name
		}
	}
	if tbl.SnapshotID != 0 {
		out.Facets.Version = &VersionFacet{BaseFacet: t.base(VersionFacetURL), DatasetVersion: strconv.FormatInt(tbl.SnapshotID, 10)}
	}
	return out
}
