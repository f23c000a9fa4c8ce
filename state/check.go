package state

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Health is what Check found in a state file.
type Health struct {
	// Path is the state file.
	Path string
	// Missing is true when there is no state file; Size is its size in
	// bytes.
	Missing bool
	Size    int64
	// PageSize and Pages are the page size and the page count its meta
	// page gives.
	PageSize uint64
	Pages    uint64
	// Records counts the records read per bucket.
	Records map[string]int
	// Problems says what is wrong, in plain words; none for a sound file.
	Problems []string
}

// Check examines the state file in dir without changing it: its meta pages,
// every page of its tree, read with plain reads so that a damaged file
// cannot crash it, bbolt's own consistency check when the tree is sound,
// and every record of every bucket, decoded, with the counters and
// pointers between them. A missing or empty file is a problem only with
// opts.MustExist. Check holds the file's lock, shared, meanwhile: no run
// starts, and an error that matches ErrLocked is returned while one holds
// it.
func Check(dir string, opts Options) (Health, error) {
	path := filepath.Join(dir, FileName)
	h := Health{Path: path, Records: map[string]int{}}
	timeout := lockTimeout(opts)
	f, err := openLocked(path, false, timeout)
	if errors.Is(err, fs.ErrNotExist) {
		h.Missing = true
		if opts.MustExist {
			h.Problems = append(h.Problems, "it is missing, yet exports were made from it")
		}
		return h, nil
	}
	if err != nil {
		return h, err
	}
	defer f.Close()
	recs, res, err := examine(f, &h)
	if err != nil || res == nil {
		if h.Size == 0 && !opts.MustExist {
			h.Problems = nil // a new state, as Open would start
		}
		return h, err
	}
	if len(h.Problems) == 0 {
		h.Problems = append(h.Problems, boltCheck(path, timeout)...)
	}
	maps.Copy(h.Records, recs.read)
	return h, nil
}

// examine reads an open state file as Check does, up to bbolt's own check,
// filling in h. It returns no walk when the file has no valid meta page.
func examine(f *os.File, h *Health) (*recordCheck, *walkResult, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", h.Path, err)
	}
	h.Size = st.Size()
	if h.Size == 0 {
		h.Problems = append(h.Problems, "it is empty (0 bytes)")
		return nil, nil, nil
	}
	bf, err := openBoltFile(f)
	if err != nil {
		h.Problems = append(h.Problems, err.Error())
		return nil, nil, nil
	}
	h.PageSize, h.Pages = bf.meta.pageSize, bf.meta.pgid
	if err := bf.checkMeta(); err != nil {
		h.Problems = append(h.Problems, err.Error())
	}
	recs := newRecordCheck()
	res := bf.walk(recs.visit)
	h.Problems = append(h.Problems, res.all()...)
	h.Problems = append(h.Problems, recs.problems()...)
	return recs, &res, nil
}

// boltCheck runs bbolt's consistency check on a file whose tree is sound
// (bbolt reads it through its memory map, on a goroutine of its own).
func boltCheck(path string, timeout time.Duration) []string {
	bdb, err := openBolt(path, &bolt.Options{ReadOnly: true, Timeout: timeout})
	if err != nil {
		return []string{fmt.Sprintf("bbolt cannot open it: %v", err)}
	}
	defer bdb.Close()
	db := &boltDB{DB: bdb, path: path}
	var out []string
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			if len(out) < maxProblems {
				out = append(out, "bbolt's check: "+err.Error())
			}
		}
		return nil
	})
	if err != nil {
		out = append(out, err.Error())
	}
	return out
}

func lockTimeout(opts Options) time.Duration {
	if opts.LockTimeout <= 0 {
		return 100 * time.Millisecond
	}
	return opts.LockTimeout
}
