//go:build iceberg

package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBadIcebergConfigsNameFileLineKey: each mistake in an Iceberg output
// or its [iceberg] table is reported with the file, the line and the key.
func TestBadIcebergConfigsNameFileLineKey(t *testing.T) {
	cases := []struct {
		name, doc string
		line      int
		key, msg  string
	}{
		{"iceberg output without a namespace", `output = "iceberg://books"` + "\n" + good, 1, "output", "names no namespace"},
		{"iceberg output with a bad name", `output = "iceberg://shop.9books"` + "\n" + good, 1, "output", `"9books" is not a namespace or table name`},
		{"iceberg output with a long name", `output = "iceberg://shop.` + strings.Repeat("b", 129) + `"` + "\n" + good, 1, "output", "up to 128 letters"},
		{"iceberg output without its table", `output = "iceberg://shop.books"` + "\n" + good, 1, "output", "needs an [iceberg] table"},
		{"iceberg table with another output", good + "[iceberg]\nuri = \"sqlite:///tmp/c.db\"\n", 9, "iceberg", "needs output = \"iceberg://NAMESPACE.TABLE\""},
		{"iceberg catalog unknown", icebergDoc(`catalog = "hive"`), 11, "iceberg.catalog", `want "sql"`},
		{"iceberg sqlite relative", icebergDoc(`uri = "sqlite://catalog.db"`, `warehouse = "file:///tmp/wh"`), 11, "iceberg.uri", "an absolute file path"},
		{"iceberg uri missing", icebergDoc(`warehouse = "file:///tmp/wh"`), 10, "iceberg.uri", "required"},
		{"iceberg postgres password", icebergDoc(`uri = "postgres://u:pw@db:5432/cat"`, `warehouse = "file:///tmp/wh"`), 11, "iceberg.uri", "PGPASSWORD"},
		{"iceberg warehouse missing", icebergDoc(`uri = "sqlite:///tmp/c.db"`), 10, "iceberg.warehouse", "required with a SQL catalog"},
		{"iceberg warehouse relative", icebergDoc(`uri = "sqlite:///tmp/c.db"`, `warehouse = "file://wh"`), 12, "iceberg.warehouse", "an absolute path"},
		{"iceberg warehouse on gs", icebergDoc(`uri = "sqlite:///tmp/c.db"`, `warehouse = "gs://lake/wh"`), 12, "iceberg.warehouse", "want file:///abs/path or an s3:// URL"},
		{"iceberg warehouse with keys", icebergDoc(`uri = "sqlite:///tmp/c.db"`, `warehouse = "s3://AKIA:pw@lake/wh"`), 12, "iceberg.warehouse", "the URL holds credentials"},
		{"iceberg warehouse parameter", icebergDoc(`uri = "sqlite:///tmp/c.db"`, `warehouse = "s3://lake/wh?profile=dev"`), 12, "iceberg.warehouse", `parameter "profile" is not supported for a warehouse`},
		{"iceberg warehouse http", icebergDoc(`uri = "sqlite:///tmp/c.db"`, `warehouse = "s3://lake/wh?disable_https=true"`), 12, "iceberg.warehouse", "disable_https needs an endpoint"},
		{"iceberg warehouse path", icebergDoc(`uri = "sqlite:///tmp/c.db"`, `warehouse = "s3://lake/a/../wh"`), 12, "iceberg.warehouse", "empty, . or .. segments"},
		{"iceberg rest uri", icebergDoc(`catalog = "rest"`, `uri = "catalog.example"`), 12, "iceberg.uri", "http:// or https:// URL"},
		{"iceberg unknown key", icebergDoc(`uri = "sqlite:///tmp/c.db"`, `warehouse = "file:///tmp/wh"`, `table = "x"`), 13, "iceberg.table", "unknown key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { expectConfigError(t, tc.doc, tc.line, tc.key, tc.msg) })
	}
}

// icebergDoc is the good config publishing into iceberg://shop.books, with
// an [iceberg] table holding lines.
func icebergDoc(lines ...string) string {
	return `output = "iceberg://shop.books"` + "\n" + good + "[iceberg]\n" + strings.Join(lines, "\n") + "\n"
}

// TestIcebergOutput: a table and its catalog read as written.
func TestIcebergOutput(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want Iceberg
	}{
		{icebergDoc(`uri = "sqlite:///var/lib/books/catalog.db"`, `warehouse = "file:///var/lib/books/wh/"`),
			Iceberg{Namespace: "shop", Table: "books", Catalog: "sql", URI: "sqlite:///var/lib/books/catalog.db", Warehouse: "file:///var/lib/books/wh", Line: 10}},
		{strings.Replace(icebergDoc(`uri = "sqlite:///c.db"`, `warehouse = "file:///wh"`), "shop.books", "shop."+strings.Repeat("b", 128), 1),
			Iceberg{Namespace: "shop", Table: strings.Repeat("b", 128), Catalog: "sql", URI: "sqlite:///c.db", Warehouse: "file:///wh", Line: 10}},
		{strings.Replace(icebergDoc(`uri = "postgres://stage@db:5432/catalog"`, `warehouse = "s3://lake/wh/?region=eu-west-1"`), "shop.books", "lake.shop.books", 1),
			Iceberg{Namespace: "lake.shop", Table: "books", Catalog: "sql", URI: "postgres://stage@db:5432/catalog", Warehouse: "s3://lake/wh/?region=eu-west-1", Line: 10}},
		{icebergDoc(`uri = "sqlite:///var/lib/books/catalog.db"`, `warehouse = "s3://lake/wh?endpoint=http://127.0.0.1:7070&use_path_style=true&region=us-east-1&disable_https=true"`),
			Iceberg{Namespace: "shop", Table: "books", Catalog: "sql", URI: "sqlite:///var/lib/books/catalog.db",
				Warehouse: "s3://lake/wh?endpoint=http://127.0.0.1:7070&use_path_style=true&region=us-east-1&disable_https=true", Line: 10}},
		{icebergDoc(`catalog = "rest"`, `uri = "https://catalog.example/api"`),
			Iceberg{Namespace: "shop", Table: "books", Catalog: "rest", URI: "https://catalog.example/api", Line: 10}},
	} {
		cfg, err := Parse(filepath.Join(t.TempDir(), "books.toml"), []byte(tc.doc))
		if err != nil {
			t.Fatalf("%v\n%s", err, tc.doc)
		}
		if cfg.Iceberg == nil || *cfg.Iceberg != tc.want || !IsIceberg(cfg.Output) || IsObjectStore(cfg.Output) {
			t.Fatalf("output %q, iceberg %+v; want %+v", cfg.Output, cfg.Iceberg, tc.want)
		}
	}
}
