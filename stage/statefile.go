package stage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/gctune"
	"github.com/databrew/databrew-stage/state"
)

// ErrCorrupt matches the error Run returns when the config's state file is
// damaged: the run does not start, and the error names the file and what
// is wrong with it.
var ErrCorrupt = state.ErrCorrupt

// ErrNoState matches the error Run returns when the config's state file is
// missing or empty while its output already holds published runs: starting
// over would export every item again as new, so Run does that only with
// Options.ResetState.
var ErrNoState = state.ErrNoState

// openState opens the config's state. A state that exports were made from
// must be there: when the output holds published runs, a missing or empty
// state file is an error, as a damaged one always is, unless the options
// reset the state; the error then says the way out.
func openState(cfg config.Config, opts Options, runs int, log *slog.Logger) (*state.DB, error) {
	db, err := state.Open(cfg.Storage, state.Options{
		LockTimeout: opts.LockTimeout, MustExist: runs > 0, Reset: opts.ResetState,
		WriteBudget: opts.WriteBudget, RecentURLs: gctune.RecentURLs(),
	})
	switch {
	case errors.Is(err, state.ErrCorrupt):
		return nil, fmt.Errorf("%w; %s", err, repairHint(cfg))
	case errors.Is(err, state.ErrNoState):
		held := fmt.Sprintf(" (%d)", runs)
		if config.IsObjectStore(cfg.Output) {
			held = "" // the count stops at the first run there
		}
		return nil, fmt.Errorf("%w; %s already holds published runs%s, so starting over would export every item again as new: "+
			"restore the file, or start over knowingly with --reset-state", err, cfg.Output, held)
	case err != nil:
		return nil, err
	}
	o := db.Origin()
	path := filepath.Join(cfg.Storage, state.FileName)
	switch {
	case o.MovedTo != "":
		log.Warn("the state file was damaged or empty: it is kept aside and the run starts over; every item is exported again as new",
			"file", path, "problem", o.Problem, "moved_to", o.MovedTo)
	case o.Created && runs > 0:
		log.Warn("the state file is missing: the run starts over; every item is exported again as new", "file", path)
	case o.Created && o.Problem != "":
		log.Warn("the state file was empty, as a crash while it was created leaves it: the run starts a new state", "file", path)
	}
	return db, nil
}

// AdviseHeap asks for huge pages for the process's heap when each of
// cfgs resumes a state file, the largest no larger than the soft memory
// limit (gctune.AdviseHugePagesFor): about a third of an unchanged
// 10,000-item rerun's time went to first touches of fresh heap, which
// huge pages make cheaper, while a long run pays for them. A program
// calls it once, before Run and early, while its heap is still small; a
// run that starts over (Options.ResetState) does not call it.
func AdviseHeap(cfgs ...*config.Config) {
	gctune.AdviseHugePagesFor(resumedStateBytes(cfgs))
}

// resumedStateBytes is the size in bytes of the largest of cfgs' state
// files, 0 when one of them has none yet (its run is a first crawl) or
// cannot be examined, or when cfgs is empty.
func resumedStateBytes(cfgs []*config.Config) int64 {
	var largest int64
	for _, cfg := range cfgs {
		fi, err := os.Stat(filepath.Join(cfg.Storage, state.FileName))
		if err != nil || fi.Size() == 0 {
			return 0
		}
		largest = max(largest, fi.Size())
	}
	return largest
}

// repairHint is the way out of a damaged state file.
func repairHint(cfg config.Config) string {
	return fmt.Sprintf("salvage what it holds with 'databrew-stage state repair %s', "+
		"or start over with --reset-state (the file is kept aside; every item is exported again as new)", cfg.File)
}

// CheckState examines the config's state file without changing it (see
// state.Check); a missing or empty one is a problem when the output holds
// published runs, which for object storage means listing the output.
func CheckState(ctx context.Context, cfg config.Config) (state.Health, error) {
	runs, err := publishedRuns(ctx, cfg)
	if err != nil {
		return state.Health{}, err
	}
	return state.Check(cfg.Storage, state.Options{MustExist: runs > 0})
}

// publishedRuns counts the runs cfg's output holds (see
// publish.Output.Runs), opening an output in object storage without its
// preflight.
func publishedRuns(ctx context.Context, cfg config.Config) (int, error) {
	if cfg.Iceberg != nil {
		x, runs, err := openTableExporter(ctx, cfg, Options{}, discard)
		if err == nil {
			_ = x.table.Close()
		}
		return runs, err
	}
	if !config.IsObjectStore(cfg.Output) {
		// Globbed without opening the folder, which would create it.
		dirs, err := filepath.Glob(filepath.Join(cfg.Output, "dt=*", "run=*"))
		return len(dirs), err
	}
	out, err := openOutput(ctx, cfg.Output, 0, false)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	return out.Runs(ctx)
}

// RepairState salvages the config's state file when it is damaged (see
// state.Repair).
func RepairState(cfg config.Config) (state.Salvage, error) {
	return state.Repair(cfg.Storage, state.Options{})
}
