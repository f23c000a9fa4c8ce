package state

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/verdict"
)

// Begin starts a run in one transaction. When the queue is empty it starts
// a new traversal, which has seen nothing yet, and queues the starts. The
// URLs that failed in the previous run are queued again either way.
func (db *DB) Begin(starts []crawl.Entry) (crawl.Start, error) {
	var st crawl.Start
	// A traversal a crash ended before Finish could decide its moves
	// decides them now, before the new one marks anything seen.
	moves, err := db.settleMovesOfEndedTraversal()
	if err != nil {
		return crawl.Start{}, fmt.Errorf("begin run in %s: %w", db.dir, err)
	}
	st.Moves = moves
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		queue := tx.Bucket(bucketQueue)
		seq := max(getUint(meta, keySeq), 1)
		traversal := getUint(meta, keyTraversal)
		k, _ := queue.Cursor().First()
		st.NewTraversal = k == nil || traversal == 0
		if st.NewTraversal {
			traversal++
			if err := putUint(meta, keyTraversalGaps, 0); err != nil {
				return err
			}
		}
		seen := db.seenOf(tx)
		if st.NewTraversal {
			// The bitmaps of the pages skipped before the traversal
			// before go into the marks (see skipbits.go).
			if err := seen.skips.fold(traversal, seen.marks); err != nil {
				return err
			}
		}
		var err error
		if seq, err = db.moveFailed(tx, seq, traversal); err != nil {
			return err
		}
		if st.NewTraversal {
			for _, e := range starts {
				if seen.has(seenKey(e.URL), traversal) {
					continue
				}
				if err := db.enqueue(tx, crawl.Queued{Seq: seq, Entry: e}, traversal); err != nil {
					return err
				}
				seq++
			}
		}
		if err := putUint(meta, keySeq, seq); err != nil {
			return err
		}
		if err := putUint(meta, keyTraversal, traversal); err != nil {
			return err
		}
		st.Traversal, st.NextSeq, st.Queued = traversal, seq, db.count(queue)
		return nil
	})
	if err != nil {
		return crawl.Start{}, fmt.Errorf("begin run in %s: %w", db.dir, err)
	}
	db.traversal = st.Traversal
	if st.NewTraversal {
		if st.Forgotten, err = db.forget(st.Traversal); err != nil {
			return crawl.Start{}, fmt.Errorf("begin run in %s: forget URLs no longer linked: %w", db.dir, err)
		}
	}
	return st, nil
}

// moveFailed queues every failed URL again from seq and empties the failed
// set; failed URLs are already marked seen, and are marked again in case
// the traversal just started.
func (db *DB) moveFailed(tx *bolt.Tx, seq, traversal uint64) (uint64, error) {
	failed := tx.Bucket(bucketFailed)
	queue := tx.Bucket(bucketQueue)
	seen := db.seenOf(tx)
	c := failed.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		e, err := decodeEntry(v)
		if err != nil {
			return seq, fmt.Errorf("failed URL %q: %w", k, err)
		}
		if err := queue.Put(seqKey(seq), v); err != nil {
			return seq, err
		}
		// Marked in the failed set's order: the marks are keyed by page
		// number, which no order of the URLs' keys follows.
		if err := seen.mark(seenKey(e.URL), traversal); err != nil {
			return seq, err
		}
		seq++
	}
	if err := tx.DeleteBucket(bucketFailed); err != nil {
		return seq, err
	}
	_, err := tx.CreateBucket(bucketFailed)
	return seq, err
}

// RequeueFailed moves the failed set back into the queue for the retry
// pass, in one transaction.
func (db *DB) RequeueFailed(nextSeq uint64) (int, uint64, error) {
	var moved int
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		seq := max(nextSeq, getUint(meta, keySeq))
		moved = db.count(tx.Bucket(bucketFailed))
		var err error
		if nextSeq, err = db.moveFailed(tx, seq, db.traversal); err != nil {
			return err
		}
		return putUint(meta, keySeq, nextSeq)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("requeue failed URLs in %s: %w", db.dir, err)
	}
	return moved, nextSeq, nil
}

// Finish adds the coverage gaps the run's crawl left to the traversal's,
// and returns what is left for the next run.
func (db *DB) Finish(gaps int) (crawl.Finish, error) {
	var f crawl.Finish
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		traversalGaps := getUint(meta, keyTraversalGaps) + uint64(max(gaps, 0))
		if err := putUint(meta, keyTraversalGaps, traversalGaps); err != nil {
			return err
		}
		f.TraversalGaps = int(traversalGaps)
		f.Failed = db.count(tx.Bucket(bucketFailed))
		f.Queued = db.count(tx.Bucket(bucketQueue)) + f.Failed
		return nil
	})
	if err != nil {
		return crawl.Finish{}, fmt.Errorf("finish run in %s: %w", db.dir, err)
	}
	if f.Queued == f.Failed {
		// The traversal is complete: its moves are decided.
		if f.Moves, err = db.settleMoves(db.traversal); err != nil {
			return crawl.Finish{}, fmt.Errorf("finish run in %s: %w", db.dir, err)
		}
	}
	return f, nil
}

// settleMovesOfEndedTraversal decides the moves of the current traversal
// when its queue is empty: it completed, but its last run did not get to
// decide them.
func (db *DB) settleMovesOfEndedTraversal() (crawl.Committed, error) {
	var traversal uint64
	var pending bool
	err := db.bolt.View(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketQueue).Cursor().First()
		m, _ := tx.Bucket(bucketMoves).Cursor().First()
		traversal, pending = getUint(tx.Bucket(bucketMeta), keyTraversal), k == nil && m != nil
		return nil
	})
	if err != nil || !pending {
		return crawl.Committed{}, err
	}
	return db.settleMoves(traversal)
}

// count counts a bucket's keys. Bucket.Stats would miss writes made earlier
// in the same transaction.
func (db *DB) count(b *bolt.Bucket) int {
	n := 0
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}

// RecordRun records whether a run was productive, once per run, and
// returns the empty-run streak: the runs in a row, this one included, that
// were not.
func (db *DB) RecordRun(productive bool) (int, error) {
	var streak int
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		streak = verdict.NextEmptyRunStreak(int(getUint(meta, keyStreak)), productive)
		return putUint(meta, keyStreak, uint64(streak))
	})
	if err != nil {
		return 0, fmt.Errorf("record the run in %s: %w", db.dir, err)
	}
	return streak, nil
}
