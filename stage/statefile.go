package stage

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/databrew/databrew-stage/config"
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
func openState(cfg config.Config, opts Options, log *slog.Logger) (*state.DB, error) {
	runs := publishedRuns(cfg.Output)
	db, err := state.Open(cfg.Storage, state.Options{
		LockTimeout: opts.LockTimeout, MustExist: runs > 0, Reset: opts.ResetState,
	})
	switch {
	case errors.Is(err, state.ErrCorrupt):
		return nil, fmt.Errorf("%w; %s", err, repairHint(cfg))
	case errors.Is(err, state.ErrNoState):
		return nil, fmt.Errorf("%w; %s already holds published runs (%d), so starting over would export every item again as new: "+
			"restore the file, or start over knowingly with --reset-state", err, cfg.Output, runs)
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

// repairHint is the way out of a damaged state file.
func repairHint(cfg config.Config) string {
	return fmt.Sprintf("salvage what it holds with 'databrew-stage state repair %s', "+
		"or start over with --reset-state (the file is kept aside; every item is exported again as new)", cfg.File)
}

// publishedRuns counts the run folders in the output: the exports the
// state's items were published to.
func publishedRuns(output string) int {
	dirs, _ := filepath.Glob(filepath.Join(output, "dt=*", "run=*"))
	return len(dirs)
}

// CheckState examines the config's state file without changing it (see
// state.Check); a missing or empty one is a problem when the output holds
// published runs.
func CheckState(cfg config.Config) (state.Health, error) {
	return state.Check(cfg.Storage, state.Options{MustExist: publishedRuns(cfg.Output) > 0})
}

// RepairState salvages the config's state file when it is damaged (see
// state.Repair).
func RepairState(cfg config.Config) (state.Salvage, error) {
	return state.Repair(cfg.Storage, state.Options{})
}
