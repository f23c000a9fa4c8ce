package state

import bolt "go.etcd.io/bbolt"

// bbolt holds every page a write transaction changes on the Go heap,
// decoded into a node, until the transaction commits, and then a copy of
// it to write. The crawl writes keys all over the file (the seen set, the
// page memos and the items are keyed by hash and by item key), so one
// transaction for a batch of a listing page's 100,000 links, or for a
// publish that retires a million versions, would hold most of the file in
// memory at once. The write transactions that may change many keys
// (Commit, the retirement of published versions, forgetting URLs)
// therefore estimate what they hold and, once that reaches the write
// budget, commit and go on in a new transaction.
//
// Pages a transaction only reads are not held: bbolt reads them through
// its memory map, so they are page cache, which the kernel reclaims under a
// memory limit like any other (a cgroup charges page cache to the cgroup
// and reclaims it before it kills; see the README's memory measurements).

const (
	// DefaultWriteBudget is what one write transaction may hold of changed
	// pages, in bytes, unless Options say otherwise.
	DefaultWriteBudget = 8 << 20
	// writeBytes is what one random-key write may hold: its leaf page
	// decoded (about a hundred entries of 64 bytes for a page of the seen
	// set) and the copy written at commit.
	writeBytes = 12 << 10
	// scanBytesPerPage is the least a leaf page holds of keys and values
	// (bbolt splits pages half full): writes next in key order share their
	// leaf page, so each holds its entry's share of one.
	scanBytesPerPage = 2 << 10
)

// commitInParts runs fn in write transactions until it reports done; fn
// ends a transaction early (full) once commitFull reports the budget
// spent.
func (db *DB) commitInParts(fn func(tx *bolt.Tx) (full, done bool, err error)) error {
	for {
		var done bool
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			db.held = 0
			var err error
			_, done, err = fn(tx)
			return err
		})
		if err != nil || done {
			return err
		}
	}
}

// commitFull records that a transaction of commitInParts may hold n more
// bytes of changed pages and reports whether it should end.
func (db *DB) commitFull(n int) bool {
	db.held += int64(n)
	return db.held >= db.budget
}

// randomWrites is what n random-key writes may hold.
func randomWrites(n int) int { return n * writeBytes }

// orderedWrite is what writing an entry of n bytes of key and value in key
// order may hold.
func orderedWrite(n int) int { return max(n, 64) * writeBytes / scanBytesPerPage }
