package state

import (
	"bytes"
	"errors"
	"slices"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Merging runs (see runs.go). The runs a fold writes hold a recent part
// each; once mergeFanIn runs are of one size, a merge writes them into
// one new run, reading each in key order and appending to the
// new one, so a key is written once per size it passes through: at
// 1,000,000 items, three or four times in all, each time with the pages
// written in order, against one page read and written per key or two when
// folds went into one tree. A merge runs in transactions within the write
// budget; the new run is marked merging in the meta bucket until the
// transaction that deletes the runs it merged and unmarks it, and a merge
// cut short leaves a run that Open deletes (undoMerge). A write to a run
// by another transaction in between (a record rewritten where it is, a URL
// forgotten) would be missing from the new run, so the merge then gives up
// and deletes it; the next fold tries again.

// The steps DB.between is called after.
const (
	stepFoldWritten = "fold written"
	stepMergePart   = "merge part"
)

// mergeFanIn is how many runs of one size a merge takes.
const mergeFanIn = 4

// errMergeOvertaken is a merge that a write to its runs overtook.
var errMergeOvertaken = errors.New("a run being merged was written to")

// runLevel is the size class of a run of count keys when a fold writes
// about unit: 0 below two units, one more for each mergeFanIn times that.
func runLevel(count, unit int) int {
	level := 0
	for c := count; c >= 2*max(unit, 1); c /= mergeFanIn {
		level++
	}
	return level
}

// mergeCandidates returns the runs the next merge takes: the oldest
// mergeFanIn of the smallest size class that has as many; none while a
// fold fills a run. A key is in one run only, so the runs merged need not
// be the newest, nor side by side: a run left behind (a merge gave way, a
// fold was cut short) is merged with the next of its size.
func (s *runSet) mergeCandidates(unit int) []run {
	if len(s.runs) < mergeFanIn || s.fill != 0 {
		return nil
	}
	byLevel := map[int][]run{}
	lowest := -1
	for _, r := range s.runs {
		level := runLevel(r.count, unit)
		byLevel[level] = append(byLevel[level], r)
		if len(byLevel[level]) == mergeFanIn && (lowest < 0 || level < lowest) {
			lowest = level
		}
	}
	if lowest < 0 {
		return nil
	}
	return byLevel[lowest]
}

// mergeRuns merges the runs of s while mergeCandidates finds some.
func (db *DB) mergeRuns(s *runSet, unit int) error {
	for {
		srcs := s.mergeCandidates(unit)
		if srcs == nil {
			return nil
		}
		if err := db.merge(s, srcs); errors.Is(err, errMergeOvertaken) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// merge writes the runs srcs of s into a new run, then deletes them (see
// above).
func (db *DB) merge(s *runSet, srcs []run) error {
	target := run{id: s.nextID()}
	target.name = runName(target.id)
	total := 0
	for _, r := range srcs {
		total += r.count
	}
	target.filter = newKeyFilter(uint(total))
	var writes uint64
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		writes = s.writes
		if _, err := tx.Bucket(s.container).CreateBucket(target.name); err != nil {
			return err
		}
		return putUint(tx.Bucket(bucketMeta), s.merging, target.id)
	})
	if err != nil {
		return err
	}
	var after []byte
	for part, done := 0, false; !done && err == nil; part++ {
		if part > 0 && db.between != nil {
			db.between(stepMergePart)
		}
		err = db.bolt.Update(func(tx *bolt.Tx) error {
			if s.writes != writes {
				return errMergeOvertaken
			}
			var err error
			after, done, err = db.mergePart(tx, s, srcs, &target, after)
			return err
		})
	}
	if err != nil {
		return db.abandonMerge(s, err)
	}
	// The new run joins the list before the transaction that deletes the
	// runs it merged, which leave it after (see runs.go).
	s.setRuns(append(slices.Clone(s.runs), target))
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		if s.writes != writes {
			return errMergeOvertaken
		}
		container, meta := tx.Bucket(s.container), tx.Bucket(bucketMeta)
		for _, r := range srcs {
			if err := container.DeleteBucket(r.name); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
				return err
			}
			if err := meta.Delete(s.countKey(r.name)); err != nil {
				return err
			}
		}
		if err := putUint(meta, s.countKey(target.name), uint64(target.count)); err != nil {
			return err
		}
		return meta.Delete(s.merging)
	})
	if err != nil {
		s.setRuns(slices.DeleteFunc(slices.Clone(s.runs), func(r run) bool { return r.id == target.id }))
		return db.abandonMerge(s, err)
	}
	s.setRuns(slices.DeleteFunc(slices.Clone(s.runs), func(r run) bool {
		return slices.ContainsFunc(srcs, func(src run) bool { return src.id == r.id })
	}))
	return nil
}

// mergePart copies the keys of srcs after after (all from the first one
// when nil) to the target's bucket, as many as the write budget lets one
// transaction hold, and returns the last one copied; done says it was the
// last of all.
func (db *DB) mergePart(tx *bolt.Tx, s *runSet, srcs []run, target *run, after []byte) (last []byte, done bool, err error) {
	out, err := s.appendTo(tx, target.name)
	if err != nil {
		return nil, false, err
	}
	container := tx.Bucket(s.container)
	cursors := make([]*bolt.Cursor, 0, len(srcs))
	for i := len(srcs) - 1; i >= 0; i-- {
		if b := container.Bucket(srcs[i].name); b != nil {
			cursors = append(cursors, b.Cursor())
		}
	}
	m := newMergedCursor(cursors)
	k, v := m.first()
	if after != nil {
		if k, v = m.seek(after); k != nil && bytes.Equal(k, after) {
			k, v = m.next()
		}
	}
	var appended int64
	for ; k != nil; k, v = m.next() {
		if err := out.Put(k, v); err != nil {
			return nil, false, err
		}
		target.filter.add(k)
		target.count++
		if appended += appendCost(k, v); appended >= db.budget || db.commitFull(tx) {
			return bytes.Clone(k), false, nil
		}
	}
	return nil, true, nil
}

// abandonMerge deletes the run of a merge that failed with err, and
// returns err.
func (db *DB) abandonMerge(s *runSet, err error) error {
	if undo := db.bolt.Update(s.undoMerge); undo != nil {
		return errors.Join(err, undo)
	}
	return err
}
