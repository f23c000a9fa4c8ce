package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Publication records one publish of pending versions into an export
// folder. It is written before the folder appears (BeginPublish) and
// committed once the folder is complete (CommitPublish), so a crash in
// between is resolved by the next run: a complete folder is committed, an
// absent one is forgotten and its versions stay pending. A publish into
// object storage records its intent first, without a manifest, and again
// with the manifest once its parts are uploaded (BeginPublish replaces
// the record).
type Publication struct {
	// RunID names the publish: the run's id, or for a shard of a logical
	// run the id of the shard's attempt, one of several that may stage
	// the same logical run (see Logical).
	RunID string `json:"run_id"`
	// Logical is the logical run a shard's attempt staged its export for;
	// empty for a run of the whole config.
	Logical string `json:"logical_run,omitempty"`
	// Output is the config's output as it was given when a shard staged
	// its export, so a later run can settle it there after the config
	// moved to another output.
	Output string `json:"output,omitempty"`
	// MaxSeq is the highest pending sequence number the publish took.
	MaxSeq uint64 `json:"max_seq"`
	// Target is the object-storage output published into; empty for a
	// local folder.
	Target string `json:"target,omitempty"`
	// Dir is the run folder readers see (in object storage, the run's key
	// prefix).
	Dir string `json:"dir"`
	// Staging is where the folder was written before it was renamed.
	Staging string `json:"staging"`
	// Manifest is the folder's _manifest.json, kept so an interrupted
	// publish can be completed.
	Manifest json.RawMessage `json:"manifest"`
	// Verdict is the run folder's _verdict.json, for a publish into object
	// storage, where the file is written when the run is committed.
	Verdict json.RawMessage `json:"verdict,omitempty"`
	// Uploads holds, for a publish into S3, the multipart upload id of
	// each part file by name: the uploads the commit completes.
	Uploads map[string]string `json:"uploads,omitempty"`
	Rows    int               `json:"rows"`
	At      time.Time         `json:"at"`
}

// HasManifest reports whether the publication records its manifest: a
// publish into object storage that got this far is rolled forward after a
// crash, one that did not is rolled back.
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
