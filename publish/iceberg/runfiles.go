package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

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
	_, err = tbl.DeleteOrphanFiles(ctx,
		table.WithLocation(dataLocation(tbl)),
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
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil // no data folder yet
	}
	if err != nil {
		return deleted, fmt.Errorf("remove the unreferenced data files of run %s: %w", runID, err)
	}
	return deleted, nil
}
