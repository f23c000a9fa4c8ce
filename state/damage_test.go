package state

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

// damagedItems is how many items populate stores: enough for the items
// and the version log to span several leaf pages each.
const damagedItems = 400

// populate stores damagedItems items, each with a pending version, and
// closes the state as a run does.
func populate(t *testing.T, dir string) {
	t.Helper()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Begin(nil); err != nil {
		t.Fatal(err)
	}
	for i := range damagedItems {
		store(t, db, version(fmt.Sprintf("k%03d", i), hash(i)))
	}
	// The records in the items bucket, as after a crawl of many items,
	// not in its recent part (see recentitems.go).
	if err := db.foldItems(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// firstItemRun names the bucket of the first run of item records, which
// populate's fold writes.
var firstItemRun = string(bucketItemRuns) + "/" + string(runName(1))

// statePath is the state file in dir.
func statePath(dir string) string { return filepath.Join(dir, FileName) }

// metaOf reads the meta bbolt uses.
func metaOf(t *testing.T, path string) boltMeta {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bf, err := openBoltFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return bf.meta
}

// leavesOf lists the pages one level below a bucket's root page, which
// must be a branch: the bucket's leaves (or lower branches).
func leavesOf(t *testing.T, path, bucket string) []uint64 {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var root uint64
	_ = bdb.View(func(tx *bolt.Tx) error {
		// A bucket inside a bucket is named parent/child.
		names := strings.Split(bucket, "/")
		b := tx.Bucket([]byte(names[0]))
		for _, name := range names[1:] {
			b = b.Bucket([]byte(name))
		}
		root = uint64(b.Root())
		return nil
	})
	_ = bdb.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bf, err := openBoltFile(f)
	if err != nil {
		t.Fatal(err)
	}
	page, err := bf.readPage(root, nil, pageBranch)
	if err != nil {
		t.Fatalf("%s's root page %d: %v", bucket, root, err)
	}
	var out []uint64
	for i := range int(readHeader(page).count) {
		out = append(out, native.Uint64(page[pageHeaderSize+i*elemSize+8:]))
	}
	return out
}

// garble writes random bytes over pages of the file.
func garble(t *testing.T, path string, pages ...uint64) {
	t.Helper()
	ps := metaOf(t, path).pageSize
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rng := rand.New(rand.NewPCG(7, uint64(len(pages))))
	junk := make([]byte, ps)
	for _, p := range pages {
		for i := range junk {
			junk[i] = byte(rng.Uint32())
		}
		if _, err := f.WriteAt(junk, int64(p*ps)); err != nil {
			t.Fatal(err)
		}
	}
}

// truncateHalf cuts the file to half the pages its meta says it has.
func truncateHalf(t *testing.T, path string) {
	t.Helper()
	m := metaOf(t, path)
	if err := os.Truncate(path, int64(m.pgid/2*m.pageSize)); err != nil {
		t.Fatal(err)
	}
}

func wantCorrupt(t *testing.T, err error, path, about string) {
	t.Helper()
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), about) {
		t.Fatalf("error = %v, want one that matches ErrCorrupt, names %s and says %q", err, path, about)
	}
}

// A truncated file is refused before bbolt maps it: reading its free list
// or its pages would fault (SIGBUS) and kill the process.
func TestOpenRefusesATruncatedFile(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir)
	truncateHalf(t, statePath(dir))
	before, _ := os.ReadFile(statePath(dir))
	_, err := Open(dir, Options{})
	wantCorrupt(t, err, statePath(dir), "truncated")
	if after, _ := os.ReadFile(statePath(dir)); !bytes.Equal(before, after) {
		t.Error("Open changed the damaged file")
	}
}

// Garbage in pages Open does not read (Open reads the URL index and the
// items bucket for their keys, not the pending versions) is found by the
// first transaction that reads them: an error, not a panic; later calls
// return it without reading the file, and Close does not write to it.
func TestGarbledPagesAreAnErrorNotAPanic(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir)
	garble(t, statePath(dir), leavesOf(t, statePath(dir), string(bucketVersions))...)
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open read the garbled pages: %v", err)
	}
	_, err = db.Commit(&crawl.Batch{Done: []crawl.Done{{Seq: 1, Entry: entry("http://h/k001", crawl.KindItem), Items: []crawl.ItemVersion{version("k001", hash(9))}}}})
	wantCorrupt(t, err, statePath(dir), "garbled")
	before, _ := os.ReadFile(statePath(dir))
	if _, again := db.PendingSummary(); !errors.Is(again, ErrCorrupt) {
		t.Errorf("a later call returned %v, want the damage", again)
	}
	if err := db.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if after, _ := os.ReadFile(statePath(dir)); !bytes.Equal(before, after) {
		t.Error("Close wrote to the damaged file")
	}
}

// A file cut short while open faults when its pages are read through the
// memory map: the fault is an error that matches ErrCorrupt.
func TestAMemoryFaultIsAnError(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir)
	db := open(t, dir)
	if err := os.Truncate(statePath(dir), int64(2*metaOf(t, statePath(dir)).pageSize)); err != nil {
		t.Fatal(err)
	}
	err := db.ForEachPending(^uint64(0), func(Version) error { return nil })
	wantCorrupt(t, err, statePath(dir), "memory fault")
}

// A file that was not closed has no list of free pages, which bbolt
// rebuilds by reading every page on a goroutine of its own, where a
// garbled page would crash the process: Open reads every page first.
func TestOpenWithoutAFreeListChecksEveryPage(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir)
	db := open(t, dir)
	if _, err := db.Begin(nil); err != nil { // a commit drops the free list
		t.Fatal(err)
	}
	if err := db.bolt.DB.Close(); err != nil { // as a killed process leaves it
		t.Fatal(err)
	}
	if metaOf(t, statePath(dir)).freelist != noFreelist {
		t.Fatal("the file still has a free list")
	}
	garble(t, statePath(dir), leavesOf(t, statePath(dir), string(bucketVersions))[1])
	_, err := Open(dir, Options{})
	wantCorrupt(t, err, statePath(dir), "versions: page")
}

func TestMissingOrEmptyStateFiles(t *testing.T) {
	t.Run("missing, must exist", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state")
		_, err := Open(dir, Options{MustExist: true})
		if !errors.Is(err, ErrNoState) || !strings.Contains(err.Error(), statePath(dir)) {
			t.Fatalf("error = %v, want ErrNoState naming the file", err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Open created the storage folder: %v", err)
		}
	})
	t.Run("missing, reset", func(t *testing.T) {
		db, err := Open(t.TempDir(), Options{MustExist: true, Reset: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if o := db.Origin(); !o.Created || o.Problem == "" || o.MovedTo != "" {
			t.Errorf("origin = %+v", o)
		}
	})
	for _, tt := range []struct {
		name              string
		opts              Options
		wantErr, wantMove bool
	}{
		{"empty, new", Options{}, false, false},
		{"empty, must exist", Options{MustExist: true}, true, false},
		{"empty, reset", Options{MustExist: true, Reset: true}, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(statePath(dir), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := Open(dir, tt.opts)
			if tt.wantErr {
				if !errors.Is(err, ErrNoState) || !strings.Contains(err.Error(), "empty") {
					t.Fatalf("error = %v, want ErrNoState saying the file is empty", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			o := db.Origin()
			if !o.Created || !strings.Contains(o.Problem, "empty") || (o.MovedTo != "") != tt.wantMove {
				t.Errorf("origin = %+v", o)
			}
		})
	}
}

// Reset moves a damaged file aside, whole, and starts a new state; it
// keeps a sound one.
func TestResetMovesADamagedFileAside(t *testing.T) {
	dir := t.TempDir()
	populate(t, dir)
	db, err := Open(dir, Options{Reset: true})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := db.PendingSummary(); p.Count != damagedItems || db.Origin().Created {
		t.Fatalf("a sound state was not kept: %+v, origin %+v", p, db.Origin())
	}
	_ = db.Close()

	garble(t, statePath(dir), leavesOf(t, statePath(dir), firstItemRun)[0])
	damaged, _ := os.ReadFile(statePath(dir))
	db, err = Open(dir, Options{Reset: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o := db.Origin()
	if !o.Created || !strings.Contains(o.Problem, firstItemRun+": page") || filepath.Dir(o.MovedTo) != dir ||
		!strings.HasPrefix(filepath.Base(o.MovedTo), FileName+".broken-") {
		t.Fatalf("origin = %+v", o)
	}
	if kept, _ := os.ReadFile(o.MovedTo); !bytes.Equal(kept, damaged) {
		t.Error("the file moved aside is not the damaged file")
	}
	if p, _ := db.PendingSummary(); p.Count != 0 {
		t.Errorf("the new state has %d pending versions", p.Count)
	}
}
