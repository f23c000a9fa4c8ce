package lineage

import (
	"encoding/json"
	"testing"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/verdict"
)

// testSnapshotID is a snapshot id beyond a float64's exact integers.
const testSnapshotID = int64(7340955470153711426)

// testIceberg is an [iceberg] table of a SQLite catalog with a local
// warehouse.
func testIceberg() *config.Iceberg {
	return &config.Iceberg{Namespace: "shop", Table: "books", Catalog: config.IcebergSQL,
		URI: "sqlite:///var/lib/databrew/catalog.db", Warehouse: "file:///var/lib/databrew/warehouse"}
}

// icebergTracker is the tracker of a config publishing into ic's table.
func icebergTracker(t *testing.T, ic *config.Iceberg) *Tracker {
	t.Helper()
	cfg := testConfig(t.TempDir())
	cfg.Output, cfg.Iceberg = "iceberg://"+ic.Namespace+"."+ic.Table, ic
	tr, err := NewTracker(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// icebergReport is the verdict of a run into testIceberg's table that
// committed snapshot id (0: none, nothing new).
func icebergReport(id int64) verdict.RunReport {
	rep := unproductiveReport()
	rep.Export = verdict.Export{Files: []string{}, Reason: "nothing new or changed to publish"}
	if id != 0 {
		rep.Productive = true
		rep.Export = verdict.Export{Published: true, Path: "iceberg://shop.books (sqlite:///var/lib/databrew/catalog.db)",
			Files: []string{"file:///var/lib/databrew/warehouse/shop.db/books/data/_seen_at_day=2026-11-30/a.parquet"}, Rows: 12}
	}
	rep.Export.Table = &verdict.Table{Format: verdict.TableFormatIceberg, Name: "shop.books",
		Catalog: "sqlite:///var/lib/databrew/catalog.db", Location: "file:///var/lib/databrew/warehouse/shop.db/books", SnapshotID: id}
	return rep
}

// outputOf decodes the one output dataset of event.
func outputOf(t *testing.T, event RunEvent) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(mustJSON(t, event), &m); err != nil {
		t.Fatal(err)
	}
	outputs := m["outputs"].([]any)
	if len(outputs) != 1 {
		t.Fatalf("%d outputs, want 1", len(outputs))
	}
	return outputs[0].(map[string]any)
}

// TestIcebergOutputDataset: an Iceberg output is named by the table's
// location, in START and COMPLETE alike, with a symlink to its name in
// the catalog (type TABLE) and the storage facet; the COMPLETE of a run
// that committed a snapshot carries its id as the dataset's version, in
// full, and one that committed none carries no version.
func TestIcebergOutputDataset(t *testing.T) {
	tr := icebergTracker(t, testIceberg())
	start := outputOf(t, tr.Start(testStart))
	complete := outputOf(t, tr.End(icebergReport(testSnapshotID)))
	nothing := outputOf(t, tr.End(icebergReport(0)))
	for name, out := range map[string]map[string]any{"START": start, "COMPLETE": complete, "COMPLETE with nothing new": nothing} {
		if out["namespace"] != "file" || out["name"] != "/var/lib/databrew/warehouse/shop.db/books" {
			t.Errorf("%s: dataset %v %v, want file /var/lib/databrew/warehouse/shop.db/books", name, out["namespace"], out["name"])
		}
		facets := out["facets"].(map[string]any)
		ids := facets["symlinks"].(map[string]any)["identifiers"].([]any)
		want := map[string]any{"namespace": "sqlite:///var/lib/databrew/catalog.db", "name": "shop.books", "type": "TABLE"}
		if len(ids) != 1 || !equalJSON(ids[0], want) {
			t.Errorf("%s: symlinks %v, want [%v]", name, ids, want)
		}
		if s := facets["storage"].(map[string]any); s["storageLayer"] != "iceberg" || s["fileFormat"] != "parquet" {
			t.Errorf("%s: storage facet %v", name, s)
		}
		v, hasVersion := facets["version"].(map[string]any)
		switch {
		case name == "COMPLETE" && (!hasVersion || v["datasetVersion"] != "7340955470153711426" || v["_schemaURL"] != VersionFacetURL):
			t.Errorf("%s: version facet %v, want datasetVersion 7340955470153711426", name, v)
		case name != "COMPLETE" && hasVersion:
			t.Errorf("%s: a version facet %v without a snapshot", name, v)
		}
	}
}

// TestIcebergDatasetNames: the location comes from the warehouse (its
// query left out) until a verdict says it; a catalog's user and query are
// no part of the symlink; a REST catalog without a warehouse names the
// dataset by the catalog until the verdict gives the location.
func TestIcebergDatasetNames(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		ic                   config.Iceberg
		location             string
		namespace, dataset   string
		linkNamespace, table string
	}{
		{"object-storage warehouse", config.Iceberg{Namespace: "lake.shop", Table: "books", URI: "postgres://stage@db:5432/catalog?sslmode=require",
			Warehouse: "s3://lake/warehouse?endpoint=http://127.0.0.1:7070&region=x"}, "",
			"s3://lake", "warehouse/lake.shop.db/books", "postgres://db:5432/catalog", "lake.shop.books"},
		{"the verdict's location", config.Iceberg{Namespace: "shop", Table: "books", URI: "sqlite:///c.db", Warehouse: "file:///w"},
			"file:///elsewhere/books", "file", "/elsewhere/books", "sqlite:///c.db", "shop.books"},
		{"REST catalog, no warehouse", config.Iceberg{Namespace: "shop", Table: "books", Catalog: config.IcebergREST, URI: "https://cat.example/api/catalog"}, "",
			"https://cat.example/api/catalog", "shop.books", "https://cat.example/api/catalog", "shop.books"},
		{"REST catalog, the verdict's location", config.Iceberg{Namespace: "shop", Table: "books", Catalog: config.IcebergREST, URI: "https://cat.example/api/catalog"},
			"s3://bucket/tables/books-2f0c", "s3://bucket", "tables/books-2f0c", "https://cat.example/api/catalog", "shop.books"},
	} {
		ns, name, link, err := icebergDataset(&tc.ic, tc.location)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if ns != tc.namespace || name != tc.dataset {
			t.Errorf("%s: dataset %s %s, want %s %s", tc.name, ns, name, tc.namespace, tc.dataset)
		}
		if link != (SymlinkIdentifier{Namespace: tc.linkNamespace, Name: tc.table, Type: SymlinkTable}) {
			t.Errorf("%s: symlink %+v", tc.name, link)
		}
	}
	if _, _, _, err := icebergDataset(nil, ""); err == nil {
		t.Error("an iceberg output without its [iceberg] table has a name")
	}
}

// equalJSON compares two decoded JSON values.
func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
