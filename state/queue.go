package state

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/databrew/databrew-stage/crawl"
)

var seenMark = []byte{1}

// Read returns up to limit queued entries with Seq > after, in order.
func (db *DB) Read(after uint64, limit int) ([]crawl.Queued, error) {
	out := make([]crawl.Queued, 0, limit)
	err := db.bolt.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketQueue).Cursor()
		for k, v := c.Seek(seqKey(after + 1)); k != nil && len(out) < limit; k, v = c.Next() {
			e, err := decodeEntry(v)
			if err != nil {
				return err
			}
			out = append(out, crawl.Queued{Seq: binary.BigEndian.Uint64(k), Entry: e})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read queue in %s: %w", db.dir, err)
	}
	return out, nil
}

// Seen reports, for each URL, whether the traversal already has it.
func (db *DB) Seen(urls []string) ([]bool, error) {
	out := make([]bool, len(urls))
	err := db.bolt.View(func(tx *bolt.Tx) error {
		seen := tx.Bucket(bucketSeen)
		for i, u := range urls {
			out[i] = seen.Get(seenKey(u)) != nil
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read seen URLs in %s: %w", db.dir, err)
	}
	return out, nil
}

// Commit applies a batch in one transaction: new URLs join the queue and
// the seen set, finished URLs leave the queue (failed ones for the failed
// set), items are stored with change detection, and URLs that failed
// during an outage go back from the failed set to the queue.
func (db *DB) Commit(b *crawl.Batch) (crawl.Committed, error) {
	var counts crawl.Committed
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		counts = crawl.Committed{}
		queue, seen, failed := tx.Bucket(bucketQueue), tx.Bucket(bucketSeen), tx.Bucket(bucketFailed)
		for _, q := range b.Enqueue {
			if seen.Get(seenKey(q.URL)) != nil {
				continue
			}
			if err := enqueue(queue, seen, q); err != nil {
				return err
			}
		}
		items := newItemWriter(tx, db.traversal)
		for _, d := range b.Done {
			if err := queue.Delete(seqKey(d.Seq)); err != nil {
				return err
			}
			var err error
			if d.Failed {
				err = failed.Put([]byte(d.URL), encodeEntry(d.Entry))
			} else {
				err = failed.Delete([]byte(d.URL))
			}
			if err != nil {
				return err
			}
			for i := range d.Items {
				if err := items.put(&d.Items[i], &counts); err != nil {
					return err
				}
			}
		}
		for _, q := range b.Retry {
			if err := failed.Delete([]byte(q.URL)); err != nil {
				return err
			}
			if err := queue.Put(seqKey(q.Seq), encodeEntry(q.Entry)); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if b.NextSeq > getUint(meta, keySeq) {
			return putUint(meta, keySeq, b.NextSeq)
		}
		return nil
	})
	if err != nil {
		return crawl.Committed{}, fmt.Errorf("commit batch to %s: %w", db.dir, err)
	}
	return counts, nil
}

func enqueue(queue, seen *bolt.Bucket, q crawl.Queued) error {
	if err := seen.Put(seenKey(q.URL), seenMark); err != nil {
		return err
	}
	return queue.Put(seqKey(q.Seq), encodeEntry(q.Entry))
}
