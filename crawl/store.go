package crawl

// Store keeps a config's crawl state: the queue, the URLs seen in the
// current traversal, the URLs that failed, and the items. Every method that
// changes state does so atomically, except Commit, which after a crash may
// leave a prefix of its batch (see Batch): its own transactions are the
// store's business.
//
// Sequence numbers order the queue. A store gives out numbers from its
// next free one, which is at least 1 and above every number it or the
// engine gave out: Begin and RequeueFailed number entries from it, and
// Commit raises it to Batch.NextSeq (it never lowers it). The engine calls
// Read and Seen from its loop while Commit runs on another goroutine; a
// store must allow that.
//
// crawl/storetest is the conformance suite every Store passes.
//
// A Store may also be a FreshTeller.
type Store interface {
	// Begin starts a run. When the queue is empty it starts a new
	// traversal: the seen set is cleared, the coverage gaps restart from
	// zero, and starts are queued in order, each URL once. URLs that failed
	// in the previous run are queued again either way, and are seen in the
	// traversal; a start among them is not queued twice.
	Begin(starts []Entry) (Start, error)
	// Read returns up to limit queued entries with Seq > after, in order.
	Read(after uint64, limit int) ([]Queued, error)
	// Seen reports, for each URL, whether the traversal already has it:
	// whether the URL was queued in the traversal, finished since or not.
	Seen(urls []string) ([]bool, error)
	// Commit applies a batch: all of it, or after a crash a prefix of it
	// in the batch's order (see Batch). It stores the items each Done
	// yields, in order, and counts them (see Committed):
	//   - new when the key is not stored; changed when the stored hash is
	//     another (or the item was marked removed, in a store that does);
	//     unchanged when it is the same;
	//   - a duplicate, not stored, when another page holds the key. The
	//     page that first stored a key (its ItemVersion.URL) holds it, and
	//     its first values in a traversal win: the same page yielding other
	//     values later in the traversal is a duplicate too. Another page
	//     takes the key over, counted changed or unchanged, when the holder
	//     missed the whole previous traversal and that page yielded the key
	//     in it, or after the item was marked removed. Which page takes it
	//     over, and when, is the store's choice while several other pages
	//     yield the key.
	// It counts each Touched item it holds for that item's URL (and not
	// as removed) unchanged and seen in the traversal, and one it holds
	// for another URL a duplicate. It replaces or removes each finished
	// page's memo as its Done says (a failed one keeps it), except that a
	// page that yielded or touched a duplicate, or touched an item it
	// could not count unchanged, keeps none.
	// A store that tombstones items removes the memo of the page that
	// held a removed item, so that page is fetched whole again.
	// FirstDuplicate comes from the first Done that yielded a duplicate.
	Commit(b *Batch) (Committed, error)
	// RequeueFailed moves the failed set back into the queue for the retry
	// pass, in an order of the store's choosing, numbering the entries from
	// nextSeq (or the store's next free number when that is higher); it
	// returns how many it moved and the next free sequence number.
	RequeueFailed(nextSeq uint64) (moved int, next uint64, err error)
	// Finish ends the run's crawl: it adds the coverage gaps the run left
	// to the traversal's, and returns what is left for the next run. When
	// the queue is empty (failed URLs aside) the traversal is complete,
	// and a key moves when its page is gone: a key another page yielded
	// in the traversal (a duplicate), whose holding page the traversal did
	// not queue, moves to the first page of the traversal that yielded
	// it, with what that page yielded — stored and counted as the page's
	// own values would be, and in Moved (Finish.Moves). A key whose
	// holder the traversal queued stays with it. A store decides the moves
	// of a traversal it could not finish so (a crash) in the Begin that
	// starts the next one, and counts them in Start.Moves.
	Finish(gaps int) (Finish, error)
	// Memo returns the store's memo of the page at url (see Done.Memo),
	// nil when it has none. Workers call it concurrently with everything
	// else.
	Memo(url string) (*PageMemo, error)
	// Dues returns what a revisit policy reads of the memos of the pages
	// at urls, in one go: for each, the PageDue of what Memo returns, with
	// Found false when it returns nil. The slice is the caller's.
	Dues(urls []string) ([]PageDue, error)
}

// Start is what Begin found and did.
type Start struct {
	// Traversal numbers the traversal this run works on: 1 is a store's
	// first, and each new traversal takes the next number.
	Traversal uint64
	// NewTraversal is true when Begin started it.
	NewTraversal bool
	// NextSeq is the first free sequence number.
	NextSeq uint64
	// Queued is how many entries wait in the queue.
	Queued int
	// Forgotten counts the URLs a new traversal dropped from the store
	// because no traversal linked them for a while (a store may keep
	// them all: then it is 0).
	Forgotten int
	// Moves counts the keys that moved when the previous traversal's
	// moves were decided here (see Finish).
	Moves Committed
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
	// Moves counts the keys that moved when the traversal completed (see
	// Store.Finish).
	Moves Committed
}

// FreshTeller is a Store that can say, as it answers Seen, which URLs it
// has never held in any traversal (fresh). A store keeps a page's memo
// only once the page was read, and the traversal reads a URL once, so the
// engine does not ask for the memo of a page it queued fresh: on a first
// crawl that is every page.
type FreshTeller interface {
	// SeenFresh is Seen, and says for each URL whether it is fresh.
	SeenFresh(urls []string) (seen, fresh []bool, err error)
}
