package state

import bolt "go.etcd.io/bbolt"

// bbolt reads the state file through a memory map, so every page a
// transaction reads stays mapped, and resident, until the process drops it.
// A crawl reads pages all over the file (the seen set and the items are
// keyed by hash and by item key), and the kernel maps up to 16 cached
// neighbours with every page it faults in, so without care resident memory
// would grow with the number of items. The DB therefore keeps what is
// mapped under a fixed budget: it estimates what its transactions may have
// mapped, asks the kernel when the estimate says the budget may be near
// (see overBudget), and drops the mapped pages once it is reached. They
// stay in the page cache and are mapped again on their next access.
//
// A write transaction must not drop its own pages: bbolt reads every page
// the transaction changed once more when it commits. Commit and
// CommitPublish therefore end a transaction when the budget is spent,
// release the pages and go on in a new one.

const (
	// DefaultResidentBudget is how many bytes of the file may be mapped
	// before the DB drops the mapped pages, unless Options say otherwise.
	DefaultResidentBudget = 16 << 20
	// lookupBytes is what one random-key lookup may map: its leaf page and
	// the neighbours the kernel maps around the fault (16 pages of 4 KiB).
	lookupBytes = 64 << 10
	// scanBytesPerPage is the least a page holds of the keys and values a
	// cursor reads in key order: bbolt splits pages half full. Pages next
	// in key order lie anywhere in the file, so each may cost a lookup.
	scanBytesPerPage = 2 << 10
)

// minCheckBytes is the least the estimate grows between two questions to
// the kernel.
const minCheckBytes = 1 << 20

// scaleOne is a scale of 1 in the fixed point of DB.scale; maxScale bounds
// it.
const (
	scaleOne = 16
	maxScale = 64 * scaleOne
)

// overBudget records that the calling transaction may have mapped n more
// bytes of the file and reports whether what is mapped has reached budget.
// The estimate only says when to ask the kernel: halfway from what was
// mapped at the last answer to the budget. Each answer also scales the
// estimates to what was really mapped since the previous one: a lookup
// right after a release maps the branch pages above its leaf too, and a
// file whose page cache holds large folios (a copied state file) is mapped
// up to 2 MiB at a time. Without an answer (no /proc) the estimate stands
// for what is mapped.
func (db *DB) overBudget(n int, budget int64) bool {
	est := db.mappedBytes.Add(int64(n) * db.scale.Load() / scaleOne)
	if est < min(db.checkAt.Load(), budget) {
		return false
	}
	now, ok := db.mappedNow()
	if !ok || now >= budget {
		return true
	}
	if prev := db.lastMapped.Swap(now); est > prev && now > prev {
		scale := db.scale.Load() * (now - prev) / (est - prev)
		db.scale.Store(min(max(scale, scaleOne), maxScale))
	}
	db.mappedBytes.Store(now)
	db.checkAt.Store(now + max((budget-now)/2, minCheckBytes))
	return false
}

// touched records that the calling transaction may have mapped n more bytes
// and drops the mapped pages once the budget is reached. Call it only inside
// a read transaction's function, or a write transaction's that changes
// little: bbolt remaps the file only while a write transaction commits, and
// not while any read transaction is open, so the mapping cannot move under
// the release.
func (db *DB) touched(n int) {
	if !db.overBudget(n, db.budget) {
		return
	}
	if db.committing.Load() {
		// Dropping the pages a commit changed would only have it map them
		// again; the caller waits for it once its transaction ends.
		db.releaseWanted.Store(true)
		return
	}
	_ = db.releaseMapped()
}

// afterRead finishes a read transaction that ran beside a commit and found
// the budget spent: it waits for the commit's transaction to end, and
// drops the mapped pages unless the commit did.
func (db *DB) afterRead() {
	if !db.releaseWanted.Swap(false) {
		return
	}
	db.commitMu.Lock()
	defer db.commitMu.Unlock()
	if now, ok := db.mappedNow(); !ok || now >= db.budget {
		_ = db.ReleaseMapped()
	}
}

// commitInParts runs fn in write transactions until it reports done; fn
// ends a transaction early (full) once commitFull reports the budget
// spent, and the mapped pages are released between the transactions.
// While a transaction runs, read transactions leave the releasing to it
// (see touched and afterRead).
func (db *DB) commitInParts(fn func(tx *bolt.Tx) (full, done bool, err error)) error {
	for {
		done, err := db.commitPartOnce(fn)
		if err != nil || done {
			return err
		}
	}
}

// commitPartOnce runs one transaction of commitInParts and releases the
// mapped pages after it when it was full.
func (db *DB) commitPartOnce(fn func(tx *bolt.Tx) (full, done bool, err error)) (done bool, err error) {
	var full bool
	db.commitMu.Lock()
	defer db.commitMu.Unlock()
	db.committing.Store(true)
	err = db.bolt.Update(func(tx *bolt.Tx) error {
		var err error
		full, done, err = fn(tx)
		return err
	})
	db.committing.Store(false)
	if err == nil && full {
		err = db.ReleaseMapped()
	}
	return done, err
}

// commitFull records that a transaction of commitInParts may have mapped n
// more bytes and reports whether it should end: a quarter of the budget is
// left for what other transactions map while it commits.
func (db *DB) commitFull(n int) bool {
	return db.overBudget(n, db.budget*3/4)
}

// lookups records n random-key lookups; see touched.
func (db *DB) lookups(n int) { db.touched(n * lookupBytes) }

// scanned records that a cursor read n bytes of keys and values in key
// order; see touched.
func (db *DB) scanned(n int) { db.touched(scanCost(n)) }

// scanCost is what reading n bytes of keys and values in key order may map.
func scanCost(n int) int { return n * (lookupBytes / scanBytesPerPage) }
