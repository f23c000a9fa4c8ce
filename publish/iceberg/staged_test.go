package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/databrew/databrew-stage/sink"
)

// TestCommitStagedAddsEveryWritersFilesInOneSnapshot: two writers (the
// shards of a logical run, each with its own table handle) stage data
// files and describe them; one CommitStaged of both descriptions adds
// them all in one snapshot carrying the logical run's id, with the same
// partition values and column statistics as the files were written with;
// a second CommitStaged of the same run adds nothing.
func TestCommitStagedAddsEveryWritersFilesInOneSnapshot(t *testing.T) {
	forEachCatalog(t, func(t *testing.T, o Options) {
		ctx := context.Background()
		s := testSchema()
		first := publish(t, open(t, o, s), "run-0", makeRows("run-0", "z", 3))
		var staged []json.RawMessage
		var rows [][]sinkRows
		var written []string
		for i, prefix := range []string{"a", "b"} {
			tbl := open(t, o, s)
			r := makeRows("logical-1", prefix, 7+i)
			rows = append(rows, []sinkRows{r})
			p, err := tbl.Stage(ctx, "attempt-"+prefix, yieldAll(r))
			if err != nil {
				t.Fatal(err)
			}
			b, err := p.Staged()
			if err != nil {
				t.Fatal(err)
			}
			staged = append(staged, b)
			written = append(written, p.Files()...)
			for _, f := range p.files {
				if len(f.Partition()) != 1 {
					t.Fatalf("data file %s has partition %v, want the day", f.FilePath(), f.Partition())
				}
			}
		}
		if n := len(snapshots(t, o)); n != 1 {
			t.Fatalf("%d snapshots before the commit, want 1: staging is invisible", n)
		}
		committer := open(t, o, s)
		id, files, err := committer.CommitStaged(ctx, "logical-1", staged)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(files)
		slices.Sort(written)
		if !slices.Equal(files, written) {
			t.Errorf("committed files %v, want the staged %v", files, written)
		}
		snaps := snapshots(t, o)
		if len(snaps) != 2 || snaps[1].SnapshotID != id || *snaps[1].ParentSnapshotID != first ||
			snaps[1].Summary.Properties[PropRunID] != "logical-1" {
			t.Fatalf("snapshots %+v, want one more, %d, carrying logical-1", snaps, id)
		}
		checkRows(t, readRows(t, o), s, makeRows("run-0", "z", 3), rows[0][0], rows[1][0])
		// The committed entries carry what the writers computed.
		got := committedEntries(t, o, id)
		for _, raw := range staged {
			var want []stagedFile
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			for _, w := range want {
				g, ok := got[w.Path]
				if !ok {
					t.Fatalf("file %s not in snapshot %d", w.Path, id)
				}
				if g.Count() != w.Rows || g.FileSizeBytes() != w.Bytes ||
					!reflect.DeepEqual(g.LowerBoundValues(), w.LowerBounds) || !reflect.DeepEqual(g.UpperBoundValues(), w.UpperBounds) ||
					!reflect.DeepEqual(g.NullValueCounts(), w.NullCounts) {
					t.Errorf("file %s committed as rows %d bytes %d bounds %v..%v nulls %v; staged %+v",
						w.Path, g.Count(), g.FileSizeBytes(), g.LowerBoundValues(), g.UpperBoundValues(), g.NullValueCounts(), w)
				}
				if day, ok := dayValue(g.Partition()[1000]); !ok || w.Day == nil || day != *w.Day {
					t.Errorf("file %s committed in partition %v, staged in day %v", w.Path, g.Partition(), w.Day)
				}
			}
		}
		again, _, err := committer.CommitStaged(ctx, "logical-1", staged)
		if err != nil || again != id {
			t.Errorf("CommitStaged again = %d, %v; want the run's snapshot %d", again, err, id)
		}
		if n := len(snapshots(t, o)); n != 2 {
			t.Errorf("%d snapshots after a second CommitStaged, want 2", n)
		}
		if err := committer.CheckStaged(ctx, staged[0]); err != nil {
			t.Errorf("CheckStaged of committed files: %v", err)
		}
	})
}

// sinkRows is one writer's rows.
type sinkRows = []sink.Row

// TestCheckStagedNamesAFileGone: a staged file removed (an orphan sweep
// ran) is reported as not existing, named.
func TestCheckStagedNamesAFileGone(t *testing.T) {
	o := testOptions(t.TempDir())
	tbl := open(t, o, testSchema())
	ctx := context.Background()
	p, err := tbl.Stage(ctx, "attempt-1", yieldAll(makeRows("logical-1", "a", 4)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Staged()
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.CheckStaged(ctx, b); err != nil {
		t.Fatalf("CheckStaged = %v with every file there", err)
	}
	gone := p.Files()[0]
	if err := os.Remove(strings.TrimPrefix(gone, "file://")); err != nil {
		t.Fatal(err)
	}
	err = tbl.CheckStaged(ctx, b)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), gone) {
		t.Errorf("CheckStaged = %v, want not-exist naming %s", err, gone)
	}
}

// committedEntries reads the data files snapshot id added, by path.
func committedEntries(t *testing.T, o Options, id int64) map[string]iceberg.DataFile {
	t.Helper()
	tbl := reader(t, o)
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	snap := tbl.Metadata().SnapshotByID(id)
	if snap == nil {
		t.Fatalf("no snapshot %d", id)
	}
	mans, err := snap.Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]iceberg.DataFile{}
	for _, m := range mans {
		if m.SnapshotID() != id {
			continue
		}
		for e, err := range m.Entries(fsys, true) {
			if err != nil {
				t.Fatal(err)
			}
			out[e.DataFile().FilePath()] = e.DataFile()
		}
	}
	return out
}
