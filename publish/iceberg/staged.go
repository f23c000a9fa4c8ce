package iceberg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// stagedFile is a data file Stage wrote, described so that another
// process (a shard's commit) can add it to the table: what Iceberg's
// manifest would hold of it. The one partition value is the day of
// _seen_at, in days since 1970-01-01.
type stagedFile struct {
	Path         string         `json:"path"`
	Spec         int32          `json:"spec_id"`
	Day          *int32         `json:"day,omitempty"`
	Rows         int64          `json:"rows"`
	Bytes        int64          `json:"bytes"`
	ColumnSizes  map[int]int64  `json:"column_sizes,omitempty"`
	ValueCounts  map[int]int64  `json:"value_counts,omitempty"`
	NullCounts   map[int]int64  `json:"null_value_counts,omitempty"`
	NaNCounts    map[int]int64  `json:"nan_value_counts,omitempty"`
	LowerBounds  map[int][]byte `json:"lower_bounds,omitempty"`
	UpperBounds  map[int][]byte `json:"upper_bounds,omitempty"`
	SplitOffsets []int64        `json:"split_offsets,omitempty"`
}

// Staged describes p's data files for CommitStaged: JSON a shard keeps
// in its manifest until the commit of its logical run adds them.
func (p *Pending) Staged() (json.RawMessage, error) {
	out := make([]stagedFile, 0, len(p.files))
	for _, df := range p.files {
		f := stagedFile{Path: df.FilePath(), Spec: df.SpecID(), Rows: df.Count(), Bytes: df.FileSizeBytes(),
			ColumnSizes: df.ColumnSizes(), ValueCounts: df.ValueCounts(), NullCounts: df.NullValueCounts(),
			NaNCounts: df.NaNValueCounts(), LowerBounds: df.LowerBoundValues(), UpperBounds: df.UpperBoundValues(),
			SplitOffsets: df.SplitOffsets()}
		for _, v := range df.Partition() {
			day, ok := dayValue(v)
			if !ok {
				return nil, fmt.Errorf("data file %s: partition value %v (%T) is not a day", df.FilePath(), v, v)
			}
			f.Day = &day
		}
		out = append(out, f)
	}
	return json.Marshal(out)
}

// dayValue reads a day transform's partition value.
func dayValue(v any) (int32, bool) {
	switch d := v.(type) {
	case int32:
		return d, true
	case iceberg.Date:
		return int32(d), true
	case int64:
		return int32(d), true
	case int:
		return int32(d), true
	}
	return 0, false
}

// decodeStaged turns what Staged described back into data files of the
// table tbl, whose partition spec must be the one they were written for.
func decodeStaged(tbl *table.Table, staged []json.RawMessage) ([]iceberg.DataFile, error) {
	spec := tbl.Spec()
	dayField := -1
	for _, f := range spec.Fields() {
		if f.Name == PartitionField {
			dayField = f.FieldID
		}
	}
	if dayField < 0 || spec.NumFields() != 1 {
		return nil, fmt.Errorf("the table's partition spec %v is not day(_seen_at) as %s", spec, PartitionField)
	}
	var out []iceberg.DataFile
	for _, raw := range staged {
		var files []stagedFile
		if err := json.Unmarshal(raw, &files); err != nil {
			return nil, fmt.Errorf("staged data files: %w", err)
		}
		for _, f := range files {
			if int(f.Spec) != spec.ID() {
				return nil, fmt.Errorf("data file %s was written for partition spec %d; the table's is %d now: run its shard again", f.Path, f.Spec, spec.ID())
			}
			part := map[int]any{}
			types := map[int]string{}
			if f.Day != nil {
				part[dayField] = iceberg.Date(*f.Day)
				types[dayField] = "date"
			}
			b, err := iceberg.NewDataFileBuilder(spec, iceberg.EntryContentData, f.Path, iceberg.ParquetFile, part, types, nil, f.Rows, f.Bytes)
			if err != nil {
				return nil, fmt.Errorf("data file %s: %w", f.Path, err)
			}
			b.ColumnSizes(f.ColumnSizes).ValueCounts(f.ValueCounts).NullValueCounts(f.NullCounts).
				NaNValueCounts(f.NaNCounts).LowerBoundValues(f.LowerBounds).UpperBoundValues(f.UpperBounds)
			if len(f.SplitOffsets) > 0 {
				b.SplitOffsets(f.SplitOffsets)
			}
			out = append(out, b.Build())
		}
	}
	return out, nil
}

// CommitStaged adds the data files staged describes (what Pending.Staged
// returned, from one or more writers) to the table in one append snapshot
// carrying runID, and returns the snapshot's id and the files' paths. A
// run the table has a snapshot of already is not committed again: its
// snapshot is returned, so a commit run again after a crash adds nothing.
// Nothing to add commits nothing and returns 0.
func (t *Table) CommitStaged(ctx context.Context, runID string, staged []json.RawMessage) (int64, []string, error) {
	tbl, err := t.load(ctx)
	if err != nil {
		return 0, nil, err
	}
	files, err := decodeStaged(tbl, staged)
	if err != nil {
		return 0, nil, fmt.Errorf("iceberg table %s: run %s: %w", t.Where(), runID, err)
	}
	p := &Pending{t: t, runID: runID, base: tbl, files: files}
	if id, found := findRun(tbl.Metadata(), runID); found {
		return id, p.Files(), nil
	}
	id, err := p.Commit(ctx)
	return id, p.Files(), err
}

// CheckStaged reports whether every data file staged describes is still
// there: an error wrapping fs.ErrNotExist names the first one gone.
func (t *Table) CheckStaged(ctx context.Context, staged json.RawMessage) error {
	var files []stagedFile
	if err := json.Unmarshal(staged, &files); err != nil {
		return fmt.Errorf("staged data files: %w", err)
	}
	tbl, err := t.load(ctx)
	if err != nil {
		return err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("open the files of iceberg table %s: %w", t.Where(), err)
	}
	for _, f := range files {
		in, err := fsys.Open(f.Path)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("data file %s: %w", f.Path, fs.ErrNotExist)
		}
		if err != nil {
			return fmt.Errorf("data file %s: %w", f.Path, err)
		}
		_ = in.Close()
	}
	return nil
}
