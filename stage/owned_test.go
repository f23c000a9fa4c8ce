package stage

import (
	"testing"
	"time"

	"github.com/databrew/databrew-stage/sink"
)

// TestOwnUpload: every key the stage's protocol writes is its own, named
// as the protocol names it (a run id as newRunID makes one, a shard's
// attempt, both formats); keys that only look alike are not.
func TestOwnUpload(t *testing.T) {
	run := sink.RunPath(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), newRunID(time.Now()))
	shard := Shard{Index: 3, Count: 12, RunID: "20260301T020000"}
	logical := sink.RunPath(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), shard.RunID)
	for _, k := range []string{
		run + "/part-00000" + sink.FormatParquet.Ext(),
		run + "/part-00012" + sink.FormatArrow.Ext(),
		run + "/" + sink.ManifestFile, run + "/" + sink.VerdictFile, run + "/" + sink.SuccessFile,
		logical + "/" + shardFolder(shard.Name()) + "/0a1b2c3d-part-00000" + sink.FormatParquet.Ext(),
		controlPath(shard.RunID, claimFile), controlPath(shard.RunID, decisionFile),
		controlPath(shard.RunID, shardManifestFile(shard.Name())), controlPath(shard.RunID, sink.VerdictFile),
		sink.VerdictFile,
	} {
		if !ownUpload(k) {
			t.Errorf("ownUpload(%q) = false, want true: the stage writes it", k)
		}
	}
	for _, k := range []string{
		"backups/db.tar", "dt=2026-03-01/notes.txt", "run=R/part-00000.parquet", "dt=2026-03-01/run=R/data.csv",
		"dt=2026-03-01/run=R/part-0.parquet", "dt=2026-03-01/run=R/sub/part-00000.parquet", "x/" + run + "/part-00000.parquet",
		".databrew-shards/notes.txt", "_verdict.json.bak", "dt=yesterday/run=R/_SUCCESS", ".databrew-probe-0123456789abcdef",
	} {
		if ownUpload(k) {
			t.Errorf("ownUpload(%q) = true, want false: another application's name", k)
		}
	}
}
