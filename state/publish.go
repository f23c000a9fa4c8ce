package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Publication records one publish of pending versions, by the protocol of
// package publish: written first as an intent (no parts), again once its
// parts are staged (Parts, Manifest), and for a run of the whole config
// once more when it is decided (Decided, Verdict); BeginPublish replaces
// the record each time. CommitPublish ends it once the run folder is
// complete, AbortPublish forgets it (its versions stay pending). A crash
// in between is resolved by the next run's reconcile: an undecided
// publish is rolled back, a decided one forward.
//
// Records written by releases before that protocol (Protocol 0) hold
// Staging and Uploads instead of Parts and Decided, and a Dir that is a
// folder path or a full key; package publish reads them to finish their
// publishes.
type Publication struct {
	// Protocol is 2 for records of package publish's protocol; 0 for
	// older ones.
	Protocol int `json:"protocol,omitempty"`
	// RunID names the publish: the run's id, or for a shard of a logical
	// run the id of the shard's attempt, one of several that may stage
	// the same logical run (see Logical).
	RunID string `json:"run_id"`
	// Logical is the logical run a shard's attempt staged its export for;
	// empty for a run of the whole config.
	Logical string `json:"logical_run,omitempty"`
	// Shard names the shard ("2-of-4") of an attempt.
	Shard string `json:"shard,omitempty"`
	// Output is the config's output as it was given, so a later run can
	// settle a shard's attempt there after the config moved to another
	// output.
	Output string `json:"output,omitempty"`
	// Target names the output published into whatever the spelling of
	// its path or URL (a folder's absolute path, an object store's
	// scheme, bucket and prefix).
	Target string `json:"target,omitempty"`
	// MaxSeq is the highest pending sequence number the publish took.
	MaxSeq uint64 `json:"max_seq"`
	// Dir is the run folder readers see, as a key of the output
	// ("dt=2026-12-02/run=ID").
	Dir string `json:"dir"`
	// Parts are the staged part files, in the manifest's order.
	Parts []Part `json:"parts,omitempty"`
	// Manifest is the run's (or the shard attempt's) manifest, kept so an
	// interrupted publish can be completed.
	Manifest json.RawMessage `json:"manifest"`
	// Verdict is the run folder's _verdict.json.
	Verdict json.RawMessage `json:"verdict,omitempty"`
	// Decided says the publish of a run of the whole config is decided:
	// from here it is rolled forward. A shard's attempt is decided by its
	// logical run's commit instead.
	Decided bool `json:"decided,omitempty"`
	Rows    int  `json:"rows"`
	// At is when the parts were written.
	At time.Time `json:"at"`

	// Staging is, in a record of Protocol 0 for a local folder, where the
	// run folder was written before it was renamed.
	Staging string `json:"staging,omitempty"`
	// Uploads holds, in a record of Protocol 0 for S3, the multipart
	// upload id of each part file by name.
	Uploads map[string]string `json:"uploads,omitempty"`
}

// Part is a staged part file of a publication: where it becomes an
// object, the token telling its staging from any other, and its size.
type Part struct {
	Key   string `json:"key"`
	Token string `json:"token,omitempty"`
	Size  int64  `json:"size"`
}

// HasManifest reports whether the publication records its manifest.
func (p Publication) HasManifest() bool {
	return len(p.Manifest) > 0 && string(p.Manifest) != "null"
}

// ErrNoPublication is returned for a run id with no publish in progress.
var ErrNoPublication = errors.New("no publish in progress")

// BeginPublish records a publish about to happen.
func (db *DB) BeginPublish(p Publication) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode publication %s: %w", p.RunID, err)
	}
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPublishing).Put([]byte(p.RunID), b)
	})
	if err != nil {
		return fmt.Errorf("record publish %s in %s: %w", p.RunID, db.dir, err)
	}
	return nil
}

// Publishing lists the publishes begun and not yet committed or aborted.
func (db *DB) Publishing() ([]Publication, error) {
	var out []Publication
	err := db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPublishing).ForEach(func(k, v []byte) error {
			var p Publication
			if err := json.Unmarshal(v, &p); err != nil {
				return fmt.Errorf("publication %s: %w", k, err)
			}
			out = append(out, p)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read publishes in %s: %w", db.dir, err)
	}
	return out, nil
}

// CommitPublish marks a publish done: the versions it took leave the
// pending set and their items count as published. The first transaction
// records the publish's sequence number, from which every item learns it
// was published the next time its record is written (no item record is
// touched here); the versions are then deleted from the log in as many
// transactions as the write budget needs (see commitInParts),
// and the last transaction moves the publish to the published set. A
// crash in between is finished by the next run's reconcile.
func (db *DB) CommitPublish(runID string) (int, error) {
	var p Publication
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketPublishing).Get([]byte(runID))
		if raw == nil {
			return ErrNoPublication
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("publication %s: %w", runID, err)
		}
		meta := tx.Bucket(bucketMeta)
		if p.MaxSeq > getUint(meta, keyPublishedSeq) {
			return putUint(meta, keyPublishedSeq, p.MaxSeq)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("commit publish %s in %s: %w", runID, db.dir, err)
	}
	retired, err := db.retireVersions(p.MaxSeq)
	if err != nil {
		return retired, fmt.Errorf("commit publish %s in %s: %w", runID, db.dir, err)
	}
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		publishing := tx.Bucket(bucketPublishing)
		raw := publishing.Get([]byte(runID))
		if raw == nil {
			return ErrNoPublication
		}
		if err := publishing.Delete([]byte(runID)); err != nil {
			return err
		}
		return tx.Bucket(bucketPublished).Put([]byte(runID), raw)
	})
	if err != nil {
		return retired, fmt.Errorf("commit publish %s in %s: %w", runID, db.dir, err)
	}
	return retired, nil
}

// retireVersions deletes the versions with Seq <= maxSeq from the front
// of the log and returns how many it deleted. When they are all the log
// holds, it drops the log's bucket whole, which frees its pages without
// decoding them into nodes (it still walks them); otherwise it deletes them in as many
// transactions as the write budget needs. Each deletion seeks its key:
// bbolt keeps a leaf emptied by deletes until the transaction commits, so
// going back to the log's first key would walk every emptied leaf again.
func (db *DB) retireVersions(maxSeq uint64) (int, error) {
	retired := 0
	next := uint64(0)
	err := db.commitInParts(func(tx *bolt.Tx) (full, done bool, err error) {
		versions := tx.Bucket(bucketVersions)
		c := versions.Cursor()
		if last, _ := c.Last(); last == nil {
			return false, true, nil
		} else if binary.BigEndian.Uint64(last) <= maxSeq {
			n := 0
			for k, _ := c.Seek(seqKey(next)); k != nil; k, _ = c.Next() {
				n++
			}
			if err := tx.DeleteBucket(bucketVersions); err != nil {
				return false, false, err
			}
			if _, err := tx.CreateBucket(bucketVersions); err != nil {
				return false, false, err
			}
			retired += n
			return false, true, addUint(tx.Bucket(bucketMeta), keyPendingCount, -n)
		}
		n := 0
		k, _ := c.Seek(seqKey(next))
		for ; k != nil && binary.BigEndian.Uint64(k) <= maxSeq && !full; k, _ = c.Seek(seqKey(next)) {
			full = db.commitFull(tx)
			next = binary.BigEndian.Uint64(k) + 1
			if err := c.Delete(); err != nil {
				return false, false, err
			}
			n++
		}
		retired += n
		if err := addUint(tx.Bucket(bucketMeta), keyPendingCount, -n); err != nil {
			return false, false, err
		}
		return full, !full, nil
	})
	return retired, err
}

// AbortPublish forgets a publish that never became visible; its versions
// stay pending.
func (db *DB) AbortPublish(runID string) error {
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPublishing).Delete([]byte(runID))
	})
	if err != nil {
		return fmt.Errorf("abort publish %s in %s: %w", runID, db.dir, err)
	}
	return nil
}

// IsPublished reports whether a publish of runID was committed.
func (db *DB) IsPublished(runID string) (bool, error) {
	var ok bool
	err := db.bolt.View(func(tx *bolt.Tx) error {
		ok = tx.Bucket(bucketPublished).Get([]byte(runID)) != nil
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("read publishes in %s: %w", db.dir, err)
	}
	return ok, nil
}
