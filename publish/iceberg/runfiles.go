package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// runNamespace is the UUID namespace of RunUUID.
var runNamespace = uuid.MustParse("5b0c2b7e-3f4e-4a8e-9d55-2f3a8e0d7c41")

// RunUUID is the UUID the names of the data files Stage writes for runID
// carry: a name-based (SHA-1) UUID of the config's name (Options.Config)
// and the run id, so the files of a run that never committed can be told
// from any other writer's, another config's run of the same id included.
func (t *Table) RunUUID(runID string) uuid.UUID {
	return uuid.NewSHA1(runNamespace, []byte(t.o.Config+"\x00"+runID))
}

// RemoveRun deletes the data files Stage wrote for runID that no snapshot
// references, whatever their age, and returns how many it deleted: what a
// publish that will never commit (rolled back, or an attempt not chosen)
// left. Files of runID that a snapshot references stay. Only the writer
// that owns runID may call it, once it knows no Commit of the run is in
// flight.
func (t *Table) RemoveRun(ctx context.Context, runID string) (int, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return 0, err
	}
	return removeRunFiles(ctx, tbl, runID, t.RunUUID(runID).String())
}

// removeRunFiles deletes the unreferenced data files of tbl whose names
// carry mark, run runID's UUID.
func removeRunFiles(ctx context.Context, tbl *table.Table, runID, mark string) (int, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return 0, fmt.Errorf("open the files of iceberg table %s: %w", tbl.Identifier(), err)
	}
	var (
		mu      sync.Mutex
		deleted int
	)
	_, err = deleteUnreferenced(ctx, tbl,
		table.WithFilesOlderThan(0),
		table.WithDeleteFunc(func(file string) error {
			if !strings.Contains(path.Base(file), mark) {
				return nil // another run's: not this call's to judge
			}
			if err := fsys.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			mu.Lock()
			deleted++
			mu.Unlock()
			return nil
		}))
	if err != nil {
		return deleted, fmt.Errorf("remove the unreferenced data files of run %s: %w", runID, err)
	}
	return deleted, nil
}

// walkTries bounds the walks of the data folder deleteUnreferenced makes
// while other writers keep removing files from it.
const walkTries = 10

// deleteUnreferenced runs tbl.DeleteOrphanFiles over the table's data
// folder with opts. Its walk fails when a file it listed is gone before
// it looks at it — another writer removing the files of its own run, a
// shard settling its attempts beside this one — and then nothing is
// deleted: the walk is made again, a few times, with a short pause. A
// data folder that does not exist (nothing was ever written) deletes
// nothing and is no error; a walk that keeps failing is one.
func deleteUnreferenced(ctx context.Context, tbl *table.Table, opts ...table.OrphanCleanupOption) (table.OrphanCleanupResult, error) {
	loc := dataLocation(tbl)
	opts = append(opts, table.WithLocation(loc))
	for attempt := 1; ; attempt++ {
		res, err := tbl.DeleteOrphanFiles(ctx, opts...)
		if !errors.Is(err, fs.ErrNotExist) {
			return res, err
		}
		exists, serr := folderExists(ctx, tbl, loc)
		if serr != nil {
			return res, errors.Join(err, serr)
		}
		if !exists {
			return table.OrphanCleanupResult{}, nil
		}
		if attempt == walkTries {
			return res, fmt.Errorf("files kept going from the data folder %s while it was walked, %d times: %w", loc, walkTries, err)
		}
		if err := backoff(ctx, attempt); err != nil {
			return res, err
		}
	}
}

// folderExists reports whether the folder root is there, as the files of
// tbl list it; files that cannot be listed say it is.
func folderExists(ctx context.Context, tbl *table.Table, root string) (bool, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return false, fmt.Errorf("open the files of iceberg table %s: %w", tbl.Identifier(), err)
	}
	l, ok := fsys.(icebergio.ListableIO)
	if !ok {
		return true, nil
	}
	err = l.WalkDir(root, func(_ string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return fs.SkipAll
	})
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look for the data folder %s: %w", root, err)
	}
	return true, nil
}
