//go:build iceberg

package main

import (
	"os/exec"
	"testing"
	"time"
)

// TestCrashLoopShardsIceberg is the shards' crash loop (see shardTrials)
// against an Iceberg table on a SQLite catalog with a local warehouse:
// logical runs of 4 shards, 2 of them killed at random or at a step of
// their attempt and run again, the commit killed at one of its steps or
// at a random moment and run again, or left to the next logical run's
// shards. All the while a reader polls the table through a catalog
// connection of its own: no snapshot it sees may hold part of a logical
// run. At the end, after one logical run that nothing kills, the table
// holds one snapshot per committed logical run, carrying its id, every
// item version a committed logical run saw once, and no data file its
// snapshot does not reference.
func TestCrashLoopShardsIceberg(t *testing.T) {
	bin, err := exec.LookPath("databrew-stage")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	lk := newIcebergLake(t.TempDir())
	// Its polls leave the shards' processes most of the CPU.
	r := watchTable(lk, 50*time.Millisecond)
	defer r.close()
	res := shardTrials(t, bin, lk, shardOptions{extra: lk.config(), cleanEnd: true})
	r.close()
	snaps := r.check(t, lk, max(1, *crashTrials/5))
	// Every snapshot is a logical run's; a logical run the loop left to
	// the next one's shards has one only when its commit had decided.
	saw := map[string]map[string]bool{}
	for _, s := range snaps {
		versions, ok := res.saw[s.RunID]
		if !ok {
			t.Errorf("snapshot %d carries run id %q, which names no logical run", s.ID, s.RunID)
		}
		for item, vals := range versions {
			if saw[item] == nil {
				saw[item] = map[string]bool{}
			}
			for v := range vals {
				saw[item][v] = true
			}
		}
	}
	checkTable(t, lk, res.committed, saw)
	t.Logf("%d trials (%d logical runs committed, %d given up) in %s", *crashTrials, len(snaps), len(res.saw)-len(snaps),
		time.Since(start).Round(time.Second))
}
