package folder

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// LegacyStagingRoots are where releases before the storage port staged a
// run's folder: beside the root (a hidden sibling) and inside it, in
// .databrew-staging.
func LegacyStagingRoots(root string) []string {
	return []string{
		filepath.Join(filepath.Dir(root), "."+filepath.Base(root)+".staging"),
		filepath.Join(root, ".databrew-staging"),
	}
}

// RemoveLegacyStaging deletes what those releases left staged in either
// place: a run that never published. A publish they recorded is decided
// by its run folder alone, so nothing staged there is needed.
func RemoveLegacyStaging(root string) error {
	var errs []error
	for _, dir := range LegacyStagingRoots(root) {
		// A path that is not there needs no removal, and asking to remove
		// it would fail on a read-only file system or under a file.
		_, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err == nil {
			err = os.RemoveAll(dir)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove staging %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}
