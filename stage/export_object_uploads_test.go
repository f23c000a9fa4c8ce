package stage

import (
	"context"
	"slices"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/internal/testkit/s3test"
	"github.com/databrew/databrew-stage/objstore"
)

// startUploads starts a multipart upload at each key (relative to the
// bucket), left in progress as another application, or a killed run,
// leaves one.
func startUploads(t *testing.T, bucket *objstore.Target, keys ...string) {
	t.Helper()
	for _, k := range keys {
		p, err := bucket.CreatePart(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Write([]byte("another application's bytes")); err != nil {
			t.Fatal(err)
		}
		if err := p.Finish(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestObjectStore_ARunAbortsOnlyItsOwnUploads: reconcile and preflight
// abort the uploads the stage's own protocol could have left — a run
// folder's part, a shard folder's, a control file's — and never another
// application's, whether the output is the bucket's root (where every
// upload of the bucket is under it) or a prefix that holds foreign names;
// and a logical run of shards, run and committed at the bucket's root,
// leaves them alone too.
func TestObjectStore_ARunAbortsOnlyItsOwnUploads(t *testing.T) {
	for _, tc := range []struct {
		name, prefix string
		shards       bool
	}{{"root", "", false}, {"prefix", "exports/", false}, {"shards at the root", "", true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := s3test.Start(t)
			srv.SetEnv(t)
			bucket := openLake(t, srv, "")
			prefix := tc.prefix
			foreign := []string{
				"backups/db-2024-05-01.tar",
				prefix + "uploads/video.mp4",
				prefix + "dt=2024-05-01/notes.txt",
				prefix + "run=7/part-00000.parquet",
				prefix + "_SUCCESS.tmp",
				prefix + ".databrew-probe-notes",
			}
			own := []string{
				prefix + "dt=2024-05-01/run=20240501T000000Z-ab12/part-00000.parquet",
				prefix + "dt=2024-05-01/run=R1/shard=0-of-2/0a1b2c3d-part-00000.parquet",
				prefix + ".databrew-shards/run=R1/_decision.json",
			}
			if tc.shards {
				own = nil // a shard aborts only what its own attempts staged
			}
			startUploads(t, bucket.t, slices.Concat(foreign, own)...)

			f := newFixture(t, catalogsite.Options{Items: 20})
			cfg := f.config(nil, "")
			cfg.Output = srv.URL(prefix)
			if tc.shards {
				runShard(t, cfg, "r1", 0, 2)
				runShard(t, cfg, "r1", 1, 2)
				if rep, err := commitRun(t, cfg, "r1", 2); err != nil || !rep.Export.Published {
					t.Fatalf("commit: %v, export %+v", err, rep.Export)
				}
			} else if rep := f.run(cfg, Options{}); !rep.Export.Published {
				t.Fatalf("export %+v", rep.Export)
			}
			left := bucket.uploads(t)
			var aborted, kept []string
			for _, k := range foreign {
				if !slices.Contains(left, k) {
					aborted = append(aborted, k)
				}
			}
			for _, k := range own {
				if slices.Contains(left, k) {
					kept = append(kept, k)
				}
			}
			if len(aborted) > 0 {
				t.Errorf("%d of %d foreign uploads aborted: %q", len(aborted), len(foreign), aborted)
			}
			if len(kept) > 0 {
				t.Errorf("%d of %d of the stage's own stale uploads left: %q", len(kept), len(own), kept)
			}
		})
	}
}
