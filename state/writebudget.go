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
// and reclaims it before it kills; see the memory measurements under
// "Tests and benchmarks" in docs/architecture.md).

const (
	// DefaultWriteBudget is what one write transaction may hold of changed
	// pages, in bytes, unless Options say otherwise.
	DefaultWriteBudget = 8 << 20
	// nodeBytes is what one changed page holds: bbolt decodes it into a
	// node (about a hundred entries of 64 bytes for a 4 KiB page of the
	// seen set) and copies it into a page buffer to write it.
	nodeBytes = 10 << 10
)

// commitInParts runs fn in write transactions until it reports done; fn
// ends a transaction early (full) once commitFull reports the budget
// spent.
func (db *DB) commitInParts(fn func(tx *bolt.Tx) (full, done bool, err error)) error {
	for {
		var done bool
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			var err error
			_, done, err = fn(tx)
			return err
		})
		if err != nil || done {
			return err
		}
	}
}

// appendCost is what appending an entry of key k and value v to a bucket
// holds until the transaction commits: bbolt's entry in the node (about
// 64 bytes and a copy of the key) and its place in the page buffer
// written (16 bytes of header, the key and the value). Appends in key
// order land on one node, which bbolt splits only as it commits, so
// commitFull, which counts nodes, does not see them: a fold and a merge
// count them with this.
func appendCost(k, v []byte) int64 { return 80 + 2*int64(len(k)) + int64(len(v)) }

// commitFull reports whether a transaction of commitInParts should end:
// the pages it changed, which bbolt counts as it decodes them, hold the
// budget. Writes that land on a page already changed cost nothing more,
// so a transaction whose keys are close (sorted, or appended) goes on
// longer than one whose keys are spread over the file.
func (db *DB) commitFull(tx *bolt.Tx) bool {
	stats := tx.Stats()
	return stats.GetNodeCount()*nodeBytes >= db.budget
}
