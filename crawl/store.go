package crawl

// Store keeps a config's crawl state: the queue, the URLs seen in the
// current traversal, the URLs that failed, and the items. Every method that
// changes state does so in one transaction.
type Store interface {
	// Begin starts a run. When the queue is empty it starts a new
	// traversal: the seen set is cleared and starts are queued. URLs that
	// failed in the previous run are queued again either way.
	Begin(starts []Entry) (Start, error)
	// Read returns up to limit queued entries with Seq > after, in order.
	Read(after uint64, limit int) ([]Queued, error)
	// Seen reports, for each URL, whether the traversal already has it.
	Seen(urls []string) ([]bool, error)
	// Commit applies a batch: all of it, or after a crash a prefix of it
	// in the batch's order (see Batch).
	Commit(b *Batch) (Committed, error)
	// RequeueFailed moves the failed set back into the queue for the retry
	// pass, numbering the entries from nextSeq; it returns how many it moved
	// and the next free sequence number.
	RequeueFailed(nextSeq uint64) (moved int, next uint64, err error)
	// Finish ends the run's crawl: it adds the coverage gaps the run left
	// to the traversal's, and returns what is left for the next run.
	Finish(gaps int) (Finish, error)
}

// Start is what Begin found and did.
type Start struct {
	// Traversal numbers the traversal this run works on.
	Traversal uint64
	// NewTraversal is true when Begin started it.
	NewTraversal bool
	// NextSeq is the first free sequence number.
	NextSeq uint64
	// Queued is how many entries wait in the queue.
	Queued int
}

// Finish is the state a run leaves behind.
type Finish struct {
	// Queued is how many entries wait in the queue, failed ones included.
	Queued int
	// Failed is how many URLs failed in this run and were not fetched
	// successfully since.
	Failed int
	// TraversalGaps counts coverage gaps over all runs of the traversal.
	TraversalGaps int
}
