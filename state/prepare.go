package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Origin says how Open came by the state it opened.
type Origin struct {
	// Created is true when Open started a new state.
	Created bool
	// Problem says what was wrong with the state file Open found when it
	// started a new one all the same: an empty file, or, with
	// Options.Reset, a damaged or empty one, or a missing one that
	// Options.MustExist expected. It is empty otherwise.
	Problem string
	// MovedTo is where Options.Reset moved the file Open found.
	MovedTo string
	// UpgradedFrom is the format of the state file Open found when it
	// converted the file to the current one; 0 when it did not.
	UpgradedFrom int
}

// lockRetry is how often a locked file is tried again.
const lockRetry = 50 * time.Millisecond

// prepare judges the state file at path under its lock, before bbolt maps
// it, and applies opts to a missing, empty or damaged one: an error, or a
// new state (a damaged or empty file moved aside first with Reset).
func prepare(path string, opts Options) (Origin, error) {
	f, err := openLocked(path, true, opts.LockTimeout)
	if errors.Is(err, fs.ErrNotExist) {
		switch {
		case !opts.MustExist:
			return Origin{Created: true}, nil
		case !opts.Reset:
			return Origin{}, fmt.Errorf("state file %s is missing: %w", path, ErrNoState)
		}
		return Origin{Created: true, Problem: "it is missing"}, nil
	}
	if err != nil {
		return Origin{}, err
	}
	defer f.Close()
	problem, empty, err := inspect(f, opts.Reset)
	switch {
	case err != nil || problem == "":
		return Origin{}, err
	case empty && !opts.MustExist && !opts.Reset:
		return Origin{Created: true, Problem: problem}, nil
	case empty && !opts.Reset:
		return Origin{}, fmt.Errorf("state file %s is empty (0 bytes): %w", path, ErrNoState)
	case !opts.Reset:
		return Origin{}, &CorruptError{Path: path, Problem: problem}
	}
	moved, err := keepAside(path, time.Now())
	if err == nil {
		err = os.Remove(path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		return Origin{}, fmt.Errorf("move damaged state file %s aside: %w", path, err)
	}
	return Origin{Created: true, Problem: problem, MovedTo: moved}, nil
}

// openLocked opens the state file at path for reading and takes its lock,
// exclusive or shared, waiting up to timeout. When the path names another
// file once the lock is held (a repair put a new one in place), it starts
// again with that one.
func openLocked(path string, exclusive bool, timeout time.Duration) (*os.File, error) {
	for {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		if err := lockFile(f, exclusive, timeout); err != nil {
			_ = f.Close()
			if errors.Is(err, ErrLocked) {
				return nil, fmt.Errorf("storage %s is in use by another process: %w", filepath.Dir(path), ErrLocked)
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return f, nil
		}
		_ = f.Close()
		if err := errors.Join(err1, err2); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}
}

// inspect judges an open state file: it reads both meta pages and the
// pages they point at, and when full is set, or when the file has no free
// list (bbolt then rebuilds it by reading every page on a goroutine of its
// own, where a fault could not be recovered), every page of the tree. It
// returns what is wrong in plain words, "" for a sound file.
func inspect(f *os.File, full bool) (problem string, empty bool, err error) {
	st, err := f.Stat()
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	if st.Size() == 0 {
		return "it is empty (0 bytes)", true, nil
	}
	bf, err := openBoltFile(f)
	if err != nil {
		return err.Error(), false, nil
	}
	if err := bf.checkMeta(); err != nil {
		return err.Error(), false, nil
	}
	if !full && bf.meta.freelist != noFreelist {
		return "", false, nil
	}
	res := bf.walk(nil)
	return res.summary(), false, nil
}

// keepAside gives the file at path a second name beside it,
// path.broken-<UTC time>, never taking another file's name, and returns
// it.
func keepAside(path string, now time.Time) (string, error) {
	base := path + ".broken-" + now.UTC().Format("20060102T150405Z")
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		err := os.Link(path, name)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return name, nil
	}
}

// syncDir makes the renames in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
