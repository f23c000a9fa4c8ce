package crawl

import "time"

// Kind says what a queued URL is expected to be.
type Kind uint8

// The page kinds.
const (
	// KindListing is a start URL or a page reached by a next-page link.
	KindListing Kind = 1
	// KindItem is a page reached by an item link.
	KindItem Kind = 2
	// KindSitemap is a sitemap or a sitemap index.
	KindSitemap Kind = 3
	// KindRobots is a host's robots.txt, read for the sitemaps it names.
	KindRobots Kind = 4
)

// String names the kind for logs.
func (k Kind) String() string {
	switch k {
	case KindListing:
		return "listing"
	case KindItem:
		return "item"
	case KindSitemap:
		return "sitemap"
	case KindRobots:
		return "robots.txt"
	default:
		return "unknown"
	}
}

// Entry is one URL to fetch.
type Entry struct {
	// URL is normalised and in scope.
	URL  string
	Kind Kind
	// Start marks a start URL of the traversal.
	Start bool
	// Paged marks a listing page of parameter pagination (?page=N): the
	// next number follows it while it yields; a page that shows it is the
	// end, answers 400, 404, 410 or 416, repeats the page before it or
	// redirects back into the chain ends the chain (see chain.go).
	Paged bool
	// Prev is, for a page of a pages chain after the first, the digest of
	// what the page before it yielded (see yieldDigest): a page that
	// yields the same ends the chain.
	Prev string
	// Card is the digest of the card around an item link on the listing
	// page that yielded it (see Link.Card); the queue and page memos keep
	// it.
	Card string
}

// Queued is an Entry with its place in the queue: entries are fetched in
// order of Seq, and Seq identifies the entry until it is done.
type Queued struct {
	Seq uint64
	Entry
	// fresh marks an entry this engine queued for a URL its store had
	// never held (see FreshTeller): the store has no memo of it. Stores
	// neither keep nor set it.
	fresh bool
}

// ItemVersion is one stored version of an item: its typed values and the
// content hash that change detection compares.
type ItemVersion struct {
	Key       string
	URL       string
	Hash      string
	Values    []any
	FetchedAt time.Time
	RunID     string
	// Why says, per field, why it found nothing on the page (see
	// extract.Item.Why); check shows it, the store does not keep it.
	Why []string
}

// PageMemo is what a store keeps of a page between runs so that a
// conditional request can reuse it: the validators the site sent with the
// page, and what the page yielded — its links and its items' keys — which
// an answer of 304 Not Modified yields again.
type PageMemo struct {
	// Tag is Settings.MemoTag of the run that made the memo: a run with
	// another tag reads pages differently and fetches them whole.
	Tag                string
	ETag, LastModified string
	Links              []Entry
	Items              []ItemRef
	// Interval and Due schedule an item page under a revisit policy: it
	// is due again at Due, set from the adaptive Interval when the page
	// was last read (see Settings.Revisit). Card is the digest of the card
	// around the link that led to the page when it was read: a link with
	// another card makes the page due at once.
	Interval time.Duration
	Due      time.Time
	Card     string
	// Chain, for a page of a pages chain or a sitemap, says what the page
	// yielded when it was last read, so that a page that yields nothing
	// now can be told apart from the end of the chain, or an empty sitemap
	// from one caught rebuilding; nil when the memo does not say.
	Chain *ChainMark
}

// PageDue is what a revisit policy reads of an item page's memo to tell
// whether the page is due (see Store.Dues): the memo's Tag, Due and Card,
// and how many items it lists. Found is false when the store holds no
// memo of the page.
type PageDue struct {
	Found     bool
	Tag, Card string
	Due       time.Time
	Items     int
}

// ChainMark is what a page of a pages chain, or a sitemap, held when it
// was last read.
type ChainMark struct {
	// Held counts the items and item links a chain page yielded, or the
	// URLs a sitemap listed.
	Held int
}

// ItemRef names a stored item: its key, the URL it was read at (the
// page's, or for a listing card the item's link) and its content hash.
type ItemRef struct {
	Key, URL, Hash string
}

// Conditional reports whether the memo can make a request conditional.
func (m *PageMemo) Conditional() bool { return m != nil && (m.ETag != "" || m.LastModified != "") }

// Done records a queued URL the run finished with.
type Done struct {
	Seq uint64
	Entry
	// Failed is true when the URL's result was a failure after its
	// retries: it leaves the queue for the failed set, which a retry pass
	// or the next run fetches again. Otherwise the URL is finished for this
	// traversal (ok or neutral) and leaves the failed set too.
	Failed bool
	// Items are the items the page yielded.
	Items []ItemVersion
	// Touched are the items a page that answered 304 Not Modified still
	// holds: the store counts each unchanged and seen in the traversal, as
	// if the page had yielded it again (see Store.Commit).
	Touched []ItemRef
	// Memo, when not nil, replaces the store's memo of the page;
	// ForgetMemo removes it. A failed URL keeps its memo whatever these
	// say.
	Memo       *PageMemo
	ForgetMemo bool
}

// Batch is everything the run finished since the previous batch. A store
// applies it in order — Enqueue, then Done, then Retry — so that a crash
// leaves at most a prefix of it: no finished page without the links it
// found. (Within Enqueue the order is free: a crash may keep any of the new
// URLs, and the page that found them, not finished, finds them again.)
type Batch struct {
	// Enqueue are newly discovered URLs with the sequence numbers the engine
	// gave them. The store keeps them and marks them seen for the traversal.
	Enqueue []Queued
	// Done are URLs the run finished, in the order it finished them.
	Done []Done
	// Skipped are item pages a revisit policy found not due: the store
	// marks each seen in the traversal, unless it already is (then the
	// skip is dropped), and counts the items its memo lists skipped; they
	// are there in the traversal, for tombstones and against a takeover
	// of their keys, as a fetch would have them, but no item record is
	// read or written (see Committed.Skipped). Applied after Enqueue.
	Skipped []Skip
	// Retry are URLs that failed during an outage and go back to the
	// queue under new sequence numbers, leaving the failed set: applied
	// after Done.
	Retry []Queued
	// NextSeq is the first sequence number the engine has not given out.
	NextSeq uint64
}

// Empty reports whether the batch holds nothing to apply.
func (b *Batch) Empty() bool {
	return len(b.Enqueue) == 0 && len(b.Done) == 0 && len(b.Retry) == 0 && len(b.Skipped) == 0
}

// Skip is an item page not fetched because it is not due, with how many
// items its memo lists (PageDue.Items): the store holds which they are.
type Skip struct {
	URL   string
	Items int
}

// Committed counts the item changes a batch stored.
type Committed struct {
	New, Changed, Unchanged int
	// Skipped counts the items of skipped item pages (see Batch.Skipped).
	Skipped int
	// DuplicateKeys counts items not stored because another page holds
	// their key; FirstDuplicate is the first of them.
	DuplicateKeys  int
	FirstDuplicate *DuplicateKey
	// Moved counts the keys that moved to the page that yielded them
	// because the traversal did not link the page holding them (see
	// Store.Finish); each is counted changed or unchanged too.
	Moved int
}

// DuplicateKey is an item key a second page yielded.
type DuplicateKey struct {
	Key string
	// HeldBy is the page whose values the item keeps; AlsoAt the other.
	HeldBy, AlsoAt string
}

// Duplicate counts an item not stored because the page heldBy holds its key.
func (c *Committed) Duplicate(key, heldBy, alsoAt string) {
	c.DuplicateKeys++
	if c.FirstDuplicate == nil {
		c.FirstDuplicate = &DuplicateKey{Key: key, HeldBy: heldBy, AlsoAt: alsoAt}
	}
}

// Add sums two counts, keeping the first duplicate.
func (c Committed) Add(o Committed) Committed {
	sum := Committed{New: c.New + o.New, Changed: c.Changed + o.Changed, Unchanged: c.Unchanged + o.Unchanged, Skipped: c.Skipped + o.Skipped,
		DuplicateKeys: c.DuplicateKeys + o.DuplicateKeys, FirstDuplicate: c.FirstDuplicate, Moved: c.Moved + o.Moved}
	if sum.FirstDuplicate == nil {
		sum.FirstDuplicate = o.FirstDuplicate
	}
	return sum
}
