package iceberg

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/databrew/databrew-stage/internal/testkit/pgtest"
	"github.com/databrew/databrew-stage/internal/testkit/s3test"
)

// forEachS3Catalog runs test on a new table whose warehouse is the prefix
// "warehouse" of a versitygw bucket (see s3test; its credentials are set
// in the environment, so the test cannot run in parallel), in a SQLite
// catalog and in a PostgreSQL catalog on a server of its own.
func forEachS3Catalog(t *testing.T, test func(t *testing.T, o Options, srv *s3test.Server)) {
	s3 := func(t *testing.T) (Options, *s3test.Server) {
		srv := s3test.Start(t)
		srv.SetEnv(t)
		o := testOptions(t.TempDir())
		o.Warehouse = srv.URL("warehouse")
		return o, srv
	}
	t.Run("sqlite", func(t *testing.T) {
		o, srv := s3(t)
		test(t, o, srv)
	})
	t.Run("postgres", func(t *testing.T) {
		pg := pgtest.Shared(t)
		o, srv := s3(t)
		o.URI, o.Getenv = pg.URI, pg.Getenv
		test(t, o, srv)
	})
}

// s3Exists reports whether the object at the s3:// URL file is in the
// server's bucket, looking at the server's own storage rather than
// through any S3 client.
func s3Exists(t *testing.T, srv *s3test.Server, file string) bool {
	t.Helper()
	key, ok := strings.CutPrefix(file, "s3://"+s3test.Bucket+"/")
	if !ok {
		t.Fatalf("%s is not in the bucket %s", file, s3test.Bucket)
	}
	_, err := os.Stat(filepath.Join(srv.Dir(), s3test.Bucket, filepath.FromSlash(key)))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestS3WarehouseCreateStageCommit: a table in an S3 warehouse is created
// at the warehouse's location without the URL's parameters, its staged
// files are in the bucket and referenced by no snapshot until the commit,
// FindRun finds committed runs, and a table opened again (loaded from the
// catalog, not created) reaches the bucket too.
func TestS3WarehouseCreateStageCommit(t *testing.T) {
	forEachS3Catalog(t, func(t *testing.T, o Options, srv *s3test.Server) {
		ctx := context.Background()
		s := testSchema()
		tbl := open(t, o, s)

		const loc = "s3://" + s3test.Bucket + "/warehouse/shop.db/books"
		r := reader(t, o)
		if r.Location() != loc {
			t.Errorf("table location %s, want %s", r.Location(), loc)
		}
		if !strings.HasPrefix(r.MetadataLocation(), loc+"/metadata/") || !s3Exists(t, srv, r.MetadataLocation()) {
			t.Errorf("metadata file %s is not in the bucket under %s", r.MetadataLocation(), loc)
		}

		rows1 := makeRows("run-1", "a", 7)
		p, err := tbl.Stage(ctx, "run-1", yieldAll(rows1))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Files()) < 2 {
			t.Errorf("rows over two days wrote %d files: %v", len(p.Files()), p.Files())
		}
		for _, f := range p.Files() {
			if !strings.HasPrefix(f, loc+"/data/"+PartitionField+"=") || !s3Exists(t, srv, f) {
				t.Errorf("data file %s is not in the bucket in a partition folder of %s/data", f, loc)
			}
		}
		if n := len(snapshots(t, o)); n != 0 {
			t.Fatalf("Stage made %d snapshots", n)
		}
		if _, found, err := tbl.FindRun(ctx, "run-1"); err != nil || found {
			t.Fatalf("FindRun before Commit = %v, %v", found, err)
		}
		id1, err := p.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, found, err := tbl.FindRun(ctx, "run-1"); err != nil || !found || got != id1 {
			t.Errorf("FindRun(run-1) = %d, %v, %v, want %d", got, found, err, id1)
		}
		checkRows(t, readRows(t, o), s, rows1)
		for f := range referencedFiles(t, o) {
			if !s3Exists(t, srv, f) {
				t.Errorf("referenced file %s is not in the bucket", f)
			}
		}

		// Another writer opens the existing table: its IO comes from the
		// catalog's properties, not from a create.
		again := open(t, o, s)
		rows2 := makeRows("run-2", "b", 5)
		id2 := publish(t, again, "run-2", rows2)
		snaps := snapshots(t, o)
		if len(snaps) != 2 || snaps[1].SnapshotID != id2 || snaps[1].Summary.Properties[PropRunID] != "run-2" {
			t.Fatalf("snapshots %v, want a second one %d for run-2", snaps, id2)
		}
		if _, found, err := tbl.FindRun(ctx, "run-2"); err != nil || !found {
			t.Errorf("FindRun(run-2) from the first writer = %v, %v", found, err)
		}
		checkRows(t, readRows(t, o), s, rows1, rows2)
	})
}

// TestS3WarehouseRemoveOrphans: RemoveOrphans lists the table's data
// folder in the bucket and deletes the files no snapshot references once
// old enough, and only those.
func TestS3WarehouseRemoveOrphans(t *testing.T) {
	forEachS3Catalog(t, func(t *testing.T, o Options, srv *s3test.Server) {
		ctx := context.Background()
		s := testSchema()
		tbl := open(t, o, s)
		if n, err := tbl.RemoveOrphans(ctx, 0); err != nil || n != 0 {
			t.Fatalf("RemoveOrphans of a table without data = %d, %v; want 0, nil", n, err)
		}
		rows1 := makeRows("run-1", "a", 6)
		publish(t, tbl, "run-1", rows1)

		p, err := tbl.Stage(ctx, "run-2", yieldAll(makeRows("run-2", "b", 6)))
		if err != nil {
			t.Fatal(err)
		}
		orphans := p.Files()
		if n, err := tbl.RemoveOrphans(ctx, time.Hour); err != nil || n != 0 {
			t.Errorf("RemoveOrphans(1h) = %d, %v, want no file younger than an hour removed", n, err)
		}
		for _, f := range orphans {
			if !s3Exists(t, srv, f) {
				t.Errorf("young orphan %s was removed", f)
			}
		}
		n, err := tbl.RemoveOrphans(ctx, 0)
		if err != nil || n != len(orphans) {
			t.Errorf("RemoveOrphans(0) = %d, %v, want %d", n, err, len(orphans))
		}
		for _, f := range orphans {
			if s3Exists(t, srv, f) {
				t.Errorf("orphan %s still in the bucket", f)
			}
		}
		ref := referencedFiles(t, o)
		if len(ref) == 0 {
			t.Error("no referenced data files")
		}
		for f := range ref {
			if !s3Exists(t, srv, f) {
				t.Errorf("referenced file %s was removed", f)
			}
		}
		checkRows(t, readRows(t, o), s, rows1)
	})
}

// TestS3WarehouseConflictingCommits: two writers stage on the same table
// state; the second to commit meets a conflict and commits its files again
// on the first's snapshot.
func TestS3WarehouseConflictingCommits(t *testing.T) {
	forEachS3Catalog(t, func(t *testing.T, o Options, _ *s3test.Server) { conflictingCommits(t, o) })
}

// TestParseWarehouse: a warehouse URL's location and IO properties.
func TestParseWarehouse(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want Warehouse
	}{
		{"file:///var/lib/wh", Warehouse{Location: "file:///var/lib/wh"}},
		{"s3://lake", Warehouse{Location: "s3://lake", Props: iceberg.Properties{"s3.force-virtual-addressing": "true"}}},
		{"s3://lake/wh/?region=eu-west-1", Warehouse{Location: "s3://lake/wh",
			Props: iceberg.Properties{"s3.force-virtual-addressing": "true", "s3.region": "eu-west-1"}}},
		{"s3://lake/a/b?endpoint=http://127.0.0.1:9000&use_path_style=true&region=us-east-1&disable_https=true", Warehouse{Location: "s3://lake/a/b",
			Props: iceberg.Properties{"s3.force-virtual-addressing": "false", "s3.region": "us-east-1", "s3.endpoint": "http://127.0.0.1:9000"}}},
		{"s3://lake/wh?endpoint=minio.internal:9000&disable_https=true", Warehouse{Location: "s3://lake/wh",
			Props: iceberg.Properties{"s3.force-virtual-addressing": "true", "s3.endpoint": "http://minio.internal:9000"}}},
		{"s3://lake/dt=x?endpoint=store.example&use_path_style=false", Warehouse{Location: "s3://lake/dt=x",
			Props: iceberg.Properties{"s3.force-virtual-addressing": "true", "s3.endpoint": "https://store.example"}}},
	} {
		got, err := ParseWarehouse(tc.raw)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseWarehouse(%q) = %+v, %v; want %+v", tc.raw, got, err, tc.want)
		}
	}
}

// TestParseWarehouseRefuses: each refused warehouse says why.
func TestParseWarehouseRefuses(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"", "no warehouse"},
		{"file://wh", "an absolute path"},
		{"file:///wh?x=1", "an absolute path"},
		{"gs://lake/wh", "not gs://"},
		{"/var/lib/wh", "a warehouse is file:///abs/path or s3://bucket/prefix"},
		{"s3:///wh", "no bucket"},
		{"s3://key:secret@lake/wh", "credentials do not belong in the URL"},
		{"s3://lake//wh", "empty, . or .. segments"},
		{"s3://lake/wh?profile=dev", `parameter "profile" is not supported for a warehouse (only endpoint, region, use_path_style, disable_https)`},
		{"s3://lake/wh?region=a&region=b", `parameter "region" given 2 times`},
		{"s3://lake/wh?use_path_style=yes", `use_path_style="yes" is not true or false`},
		{"s3://lake/wh?disable_https=true", "disable_https needs an endpoint"},
		{"s3://lake/wh?endpoint=https://store.example&disable_https=true", "is https:// but disable_https is true"},
		{"s3://lake/wh?endpoint=ftp://store.example", "is not an http:// or https:// URL"},
		{"s3://lake/my%20wh", `prefix segment "my wh" holds characters`},
	} {
		_, err := ParseWarehouse(tc.raw)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseWarehouse(%q) = %v; want an error with %q", tc.raw, err, tc.want)
		}
	}
}
