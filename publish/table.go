package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// Table is an output that is a table (an Iceberg table): a run is
// published by one atomic commit whose snapshot carries its run id, so
// any reader sees all of a run or none of it.
type Table interface {
	// ID names the table whatever the spelling of its catalog's URI;
	// publications record it.
	ID() string
	// Where names the table for people.
	Where() string
	// FindRun reports whether a commit of the table's history carries
	// runID: the run is published.
	FindRun(ctx context.Context, runID string) (found bool, err error)
	// Stage writes rows as data files no commit references yet; rows may
	// be called again (a commit that meets a concurrent writer stages
	// again on the table's new state).
	Stage(ctx context.Context, runID string, rows func(yield func(sink.Row) error) error) (TableCommit, error)
	// RemoveRun deletes the data files Stage wrote for runID that no
	// commit references, whatever their age: a publish rolled back.
	RemoveRun(ctx context.Context, runID string) (int, error)
	// CommitStaged adds the data files staged describes (TableCommit.Staged
	// of one or more writers) in one commit carrying runID, unless a
	// commit of the table carries it already; it returns the commit's
	// snapshot id and the files.
	CommitStaged(ctx context.Context, runID string, staged []json.RawMessage) (snapshot int64, files []string, err error)
	// CheckStaged reports whether the data files staged describes are all
	// still there: an error wrapping fs.ErrNotExist when one is gone.
	CheckStaged(ctx context.Context, staged json.RawMessage) error
	// RemoveOrphans deletes the data files no commit references that are
	// older than minAge (a staged append a crash cut short).
	RemoveOrphans(ctx context.Context, minAge time.Duration) (int, error)
	// Describe names the table in a verdict's export section: its
	// format, name, catalog and location, without a snapshot id.
	Describe() verdict.Table
}

// OrphanAge is how old a data file no commit references must be before a
// reconcile deletes it: older than any writer's staging of a run, in this
// process or another sharing the table.
const OrphanAge = time.Hour

// TableCommit is a staged append: Commit makes it the table's, in one
// commit carrying the run id, and says what it published: the id of the
// snapshot that commit made (0 when it had nothing to commit) and the
// data files.
type TableCommit interface {
	Commit(ctx context.Context) (snapshotID int64, files []string, err error)
	// Staged describes the staged data files for Table.CommitStaged, in
	// another process, and lists them.
	Staged() (desc json.RawMessage, files []string, err error)
}

// TablePublisher publishes a state's pending versions into a Table by
// the protocol's steps: the state records the intent (StepIntent); the
// data files are written, invisible (StepStaged); one commit of the
// table decides the publish and makes it visible at once (StepDecided,
// StepVisible); nothing is left to write (StepCompleted); the state
// commits. Reconcile resolves a crash: a publish whose run id a commit
// of the table carries is committed in the state, any other is forgotten
// and its versions stay pending; data files no commit references are
// deleted once OrphanAge old.
type TablePublisher struct {
	Table     Table
	Ledger    Ledger
	Export    Export
	Log       *slog.Logger
	AfterStep func(Step) error
}

// Publish publishes the pending versions up to maxSeq as run r, and fills
// r.Export, whose table object names the table and the snapshot the
// commit made.
func (p *TablePublisher) Publish(ctx context.Context, r *verdict.RunReport, maxSeq uint64) error {
	pub := state.Publication{Protocol: 2, RunID: r.RunID, MaxSeq: maxSeq, Target: p.Table.ID(), Output: p.Table.Where()}
	if err := p.Ledger.BeginPublish(pub); err != nil {
		return err
	}
	if err := reached(p.AfterStep, StepIntent); err != nil {
		return err
	}
	staged, counted, err := stageRows(ctx, p.Table, p.Ledger, p.Export.Schema, maxSeq, r.RunID, p.log())
	if err != nil {
		return err
	}
	if err := reached(p.AfterStep, StepStaged); err != nil {
		return err
	}
	snapshotID, files, err := staged.Commit(context.WithoutCancel(ctx))
	if err != nil {
		return fmt.Errorf("commit export into %s: %w", p.Table.Where(), err)
	}
	r.Export = verdict.Export{Published: true, Path: p.Table.Where(), Files: files, Rows: counted.rows, Table: p.Describe()}
	r.Export.Table.SnapshotID = snapshotID
	for _, s := range []Step{StepDecided, StepVisible, StepCompleted} {
		if err := reached(p.AfterStep, s); err != nil {
			return err
		}
	}
	_, err = p.Ledger.CommitPublish(r.RunID)
	return err
}

// tally counts the rows a table's Stage took, and their changes.
type tally struct {
	rows    int
	changes sink.Changes
}

// stageRows stages the pending versions up to maxSeq as the data files of
// runID in t (see Table.Stage), counting them; what a failed Stage wrote
// is removed (see removeFailedRun).
func stageRows(ctx context.Context, t Table, l Ledger, s sink.Schema, maxSeq uint64, runID string, log *slog.Logger) (TableCommit, *tally, error) {
	counted := &tally{}
	staged, err := t.Stage(ctx, runID, func(yield func(sink.Row) error) error {
		*counted = tally{} // Stage may take the rows again
		return eachRow(l, s, maxSeq, func(row sink.Row) error {
			counted.rows++
			countChange(&counted.changes, row.Change)
			return yield(row)
		})
	})
	if err != nil {
		return nil, counted, removeFailedRun(ctx, t, runID, log, err)
	}
	return staged, counted, nil
}

// removeFailedRun removes the data files a failed staging of runID wrote,
// which nothing references, and returns err, the failure, with where it
// happened; what it cannot remove the next reconcile does, since the
// state keeps the intent.
func removeFailedRun(ctx context.Context, t Table, runID string, log *slog.Logger, err error) error {
	if _, rerr := t.RemoveRun(context.WithoutCancel(ctx), runID); rerr != nil {
		log.Warn("could not remove the data files of the failed publish; the next run does", "run_id", runID, "err", rerr)
	}
	return fmt.Errorf("write export into %s: %w", t.Where(), err)
}

// Describe is the verdict's table object of the table, without a
// snapshot id: what a run's export section says of a table output before
// (or without) publishing into it.
func (p *TablePublisher) Describe() *verdict.Table {
	t := p.Table.Describe()
	return &t
}

// Reconcile resolves the publishes a crash interrupted (see
// TablePublisher).
func (p *TablePublisher) Reconcile(ctx context.Context) error {
	pubs, err := p.Ledger.Publishing()
	if err != nil {
		return err
	}
	for _, pub := range pubs {
		found := false
		if pub.Target == p.Table.ID() && pub.Logical == "" {
			if found, err = p.Table.FindRun(ctx, pub.RunID); err != nil {
				return err
			}
		}
		if found {
			p.log().Warn("a publish the table committed was not recorded; recording it", "run_id", pub.RunID, "table", p.Table.Where())
			_, err = p.Ledger.CommitPublish(pub.RunID)
		} else {
			p.log().Warn("publish interrupted before the table committed it; its items stay pending", "run_id", pub.RunID)
			err = p.rollBack(ctx, pub)
		}
		if err != nil {
			return err
		}
	}
	if n, err := p.Table.RemoveOrphans(ctx, OrphanAge); err != nil {
		p.log().Warn("could not remove the data files no commit references", "table", p.Table.Where(), "err", err)
	} else if n > 0 {
		p.log().Warn("removed data files no commit references (a publish a crash cut short)", "files", n, "table", p.Table.Where())
	}
	return nil
}

// rollBack forgets a publish the table did not commit: its data files
// go, then its record (its versions stay pending). A publish recorded for
// another output leaves its files to that output's orphan sweep.
func (p *TablePublisher) rollBack(ctx context.Context, pub state.Publication) error {
	if pub.Target == p.Table.ID() {
		n, err := p.Table.RemoveRun(ctx, pub.RunID)
		if err != nil {
			return fmt.Errorf("remove the data files of run %s, which the table did not commit: %w", pub.RunID, err)
		}
		if n > 0 {
			p.log().Info("removed the data files of the publish the table did not commit", "run_id", pub.RunID, "files", n)
		}
	}
	return p.Ledger.AbortPublish(pub.RunID)
}

func (p *TablePublisher) log() *slog.Logger {
	if p.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Log
}
