package publish

import (
	"context"
	"errors"
	"fmt"

	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// Export is what the run's files hold and how they are cut.
type Export struct {
	// Config is the config's name, written into every manifest and file.
	Config string
	// Schema is the files' columns.
	Schema sink.Schema
	// Format is the files' format.
	Format sink.Format
	// RowGroupRows is the rows of a row group (0: the default).
	RowGroupRows int
	// MaxFileRows is the most rows a part file holds where a run folder's
	// parts appear at once (Caps.CompletesAtOnce); elsewhere a run, or a
	// shard, is one part, so a reader listing part files sees all of it or
	// none.
	MaxFileRows int64
}

// write streams the pending versions up to maxSeq into part files of
// store (named where in errors) and returns the manifest.
func (p *Publisher) write(ctx context.Context, store sink.PartStore, where string, maxFileRows int64, maxSeq uint64, r *verdict.RunReport) (sink.Manifest, error) {
	x := p.Export
	m := sink.Manifest{SchemaVersion: 1, Config: x.Config, RunID: r.RunID, Format: x.Format,
		CreatedAt: r.FinishedAt, Schema: x.Schema.Fields}
	fs, err := sink.NewFileSetIn(store, where, x.Schema, sink.Options{Format: m.Format,
		RowGroupRows: x.RowGroupRows, MaxFileRows: maxFileRows, Metadata: map[string]string{
			"databrew.config": x.Config, "databrew.run_id": r.RunID, "databrew.schema_version": "1",
		}})
	if err != nil {
		return m, err
	}
	rows := 0
	var stop error // why the writing stopped, not the state's reading
	err = eachRow(p.Ledger, x.Schema, maxSeq, func(row sink.Row) error {
		if rows++; rows%1024 == 0 && ctx.Err() != nil {
			// Before the publish is staged, a signal or the export's time
			// limit abandons it: its items stay pending.
			stop = context.Cause(ctx)
			return stop
		}
		countChange(&m.Changes, row.Change)
		if err := fs.Write(row); err != nil {
			stop = err
			return err
		}
		return nil
	})
	if stop != nil {
		// Said as it is: the state was read well.
		err = stop
	}
	if err != nil {
		return m, errors.Join(err, fs.Abort())
	}
	if m.Files, err = fs.Close(); err != nil {
		return m, err
	}
	for _, f := range m.Files {
		m.Rows += f.Rows
	}
	return m, nil
}

// countChange counts a version of the change kind change in c.
func countChange(c *sink.Changes, change string) {
	switch change {
	case state.ChangeNew:
		c.New++
	case state.ChangeChanged:
		c.Changed++
	case state.ChangeRemoved:
		c.Removed++
	}
}

// eachRow calls fn with every pending version up to maxSeq as a row of
// schema s: a removed item's values are NULL.
func eachRow(l Ledger, s sink.Schema, maxSeq uint64, fn func(sink.Row) error) error {
	userFields := len(s.User())
	return l.ForEachPending(maxSeq, func(v state.Version) error {
		row := sink.Row{Key: v.Key, URL: v.URL, Change: v.Change, RunID: v.RunID, Hash: v.Hash, FetchedAt: v.FetchedAt}
		var err error
		if v.Change == state.ChangeRemoved {
			row.Values = make([]any, userFields)
		} else if row.Values, err = sink.DecodeValues(s, v.Values); err != nil {
			return fmt.Errorf("item %q: %w", v.Key, err)
		}
		return fn(row)
	})
}

// stagedParts is a Storage's staged parts under a prefix, as the sink's
// PartStore: a part file name is a key under the prefix, and Finish
// records the part.
type stagedParts struct {
	ctx    context.Context
	s      Storage
	prefix string
	open   map[string]PartWriter
	done   map[string]Part
}

func newStagedParts(ctx context.Context, s Storage, prefix string) *stagedParts {
	return &stagedParts{ctx: ctx, s: s, prefix: prefix, open: map[string]PartWriter{}, done: map[string]Part{}}
}

// Create stages the part name.
func (sp *stagedParts) Create(name string) (sink.PartWriter, error) {
	w, err := sp.s.StagePart(sp.ctx, sp.prefix+name)
	if err != nil {
		return nil, err
	}
	sp.open[name] = w
	return &stagedPart{sp: sp, name: name, w: w}, nil
}

// Remove aborts the part name, finished or not.
func (sp *stagedParts) Remove(name string) error {
	w, ok := sp.open[name]
	if !ok {
		return nil
	}
	delete(sp.open, name)
	delete(sp.done, name)
	return w.Abort()
}

// Sync does nothing: Finish made each part durable.
func (sp *stagedParts) Sync() error { return nil }

// parts lists the finished parts in the order the files were finished.
func (sp *stagedParts) parts(files []sink.FileInfo) []state.Part {
	out := make([]state.Part, 0, len(files))
	for _, f := range files {
		p := sp.done[f.Name]
		out = append(out, state.Part{Key: p.Key, Token: p.Token, Size: p.Size})
	}
	return out
}

// stagedPart is one part being staged.
type stagedPart struct {
	sp   *stagedParts
	name string
	w    PartWriter
}

func (p *stagedPart) Write(b []byte) (int, error) { return p.w.Write(b) }

func (p *stagedPart) Finish() error {
	part, err := p.w.Finish()
	if err != nil {
		return err
	}
	p.sp.done[p.name] = part
	return nil
}

func (p *stagedPart) Abort() error { return p.sp.Remove(p.name) }

// partsOf turns recorded parts into the Storage's.
func partsOf(ps []state.Part) []Part {
	out := make([]Part, len(ps))
	for i, p := range ps {
		out[i] = Part{Key: p.Key, Token: p.Token, Size: p.Size}
	}
	return out
}
