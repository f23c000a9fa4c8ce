package publish

import (
	"strings"
	"testing"
)

// TestOwnKey: the keys the protocol writes are its own, whatever their
// run id's length up to the longest the stage takes; others are not.
func TestOwnKey(t *testing.T) {
	long, tooLong := strings.Repeat("r", maxRunID), strings.Repeat("r", maxRunID+1)
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"dt=2026-12-01/run=nightly-1/part-00001.parquet", true},
		{"dt=2026-12-01/run=" + long + "/part-00001.parquet", true},
		{"dt=2026-12-01/run=" + tooLong + "/part-00001.parquet", false},
		{"dt=2026-12-01/run=nightly-1/shard=0-of-2/0a1b-part-00001.arrows", true},
		{"dt=2026-12-01/run=nightly-1/_SUCCESS", true},
		{"dt=2026-12-01/run=nightly-1/_manifest.json", true},
		{"dt=2026-12-01/run=nightly-1/notes.txt", false},
		{"dt=2026-12-01/run=/part-00001.parquet", false},
		{"dt=26-12-01/run=nightly-1/part-00001.parquet", false},
		{ShardsFolder + "/run=nightly-1/_run.json", true},
		{ShardsFolder + "/run=" + long + "/shard-0/_decision.json", true},
		{ShardsFolder + "/run=" + tooLong + "/_run.json", false},
		{"_verdict.json", true},
		{"other-app/dt=2026-12-01/run=nightly-1/part-00001.parquet", false},
	} {
		if got := OwnKey(tc.key); got != tc.want {
			t.Errorf("OwnKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}
