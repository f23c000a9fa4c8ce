package state

import (
	"sync"

	"github.com/bits-and-blooms/bloom/v3"
	bolt "go.etcd.io/bbolt"
)

// A crawl asks for keys that are not there more than for any other: every
// new URL is looked up in the URL index before it is queued, every new item
// in the item records before its record is written. Each such lookup reads
// a leaf of a run (see runs.go) that, on a large crawl, is far larger than
// the page cache a memory limit leaves (at 1,000,000 items, 64 MB of URL
// index and more of item records), so each is a read from disk. A
// keyFilter, a Bloom filter of the keys a run holds, answers most of them
// from memory: a key it has not seen is not in the run. Open fills one for
// each run and for the base; a fold adds the keys it writes to its run's
// before the recent part lets go of them (a reader that misses them in the
// recent part's map finds them in the filter), a merge those it writes to
// its new run's. Nothing else adds keys to a run while the state is open
// (an upgrade or a repair runs before the filters are filled); a key
// deleted stays in the filter, which only costs a lookup. Every filter has
// the same number of hash functions, so a key's locations are computed
// once for all the runs it is looked up in.

// keyFilterFalsePositives is the share of absent keys a filter lets
// through to the tree: about 9.6 bits of memory per key.
const keyFilterFalsePositives = 0.01

// keyFilterMinCapacity is the fewest keys a filter is sized for.
const keyFilterMinCapacity = 1 << 10

// filterHashes is how many hash functions every filter uses: the number
// that gives keyFilterFalsePositives, whatever the size.
var _, filterHashes = bloom.EstimateParameters(keyFilterMinCapacity, keyFilterFalsePositives)

// filterLocations returns key's locations in every filter.
func filterLocations(key []byte) []uint64 { return bloom.Locations(key, filterHashes) }

// keyFilter is a growing Bloom filter: a series of filters, each sized
// for twice the keys of all before it, keys added to the last one. Safe
// for concurrent use.
type keyFilter struct {
	mu      sync.RWMutex
	filters []*bloom.BloomFilter
	// sized is how many keys the filters are sized for together, room how
	// many more the last one is.
	sized, room uint
}

// newKeyFilter returns an empty filter sized for n keys to begin with.
func newKeyFilter(n uint) *keyFilter {
	f := &keyFilter{}
	f.grow(max(n, keyFilterMinCapacity))
	return f
}

// grow adds a filter sized for n keys.
func (f *keyFilter) grow(n uint) {
	m, _ := bloom.EstimateParameters(n, keyFilterFalsePositives)
	f.filters = append(f.filters, bloom.New(m, filterHashes))
	f.sized += n
	f.room = n
}

// add records that the tree holds key. A nil filter (none filled yet)
// records nothing.
func (f *keyFilter) add(key []byte) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.room == 0 {
		f.grow(2 * f.sized)
	}
	f.filters[len(f.filters)-1].Add(key)
	f.room--
}

// mayHold reports whether the tree may hold key: false means it does not.
// A nil filter (none filled yet) may hold any key.
func (f *keyFilter) mayHold(key []byte) bool {
	if f == nil {
		return true
	}
	return f.mayHoldAt(filterLocations(key))
}

// mayHoldAt is mayHold for a key whose locations (filterLocations) are
// known.
func (f *keyFilter) mayHoldAt(locations []uint64) bool {
	if f == nil {
		return true
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, b := range f.filters {
		if b.TestLocations(locations) {
			return true
		}
	}
	return false
}

// fillKeyFilter returns a filter holding every key of bucket, sized for
// at least n keys, and how many keys there are; a nil bucket holds none.
func fillKeyFilter(bucket *bolt.Bucket, n uint) (*keyFilter, int) {
	var c *bolt.Cursor
	var k []byte
	if bucket != nil {
		c = bucket.Cursor()
		k, _ = c.First()
	}
	if k == nil {
		return newKeyFilter(0), 0
	}
	f, count := newKeyFilter(n), 0
	for ; k != nil; k, _ = c.Next() {
		f.add(k)
		count++
	}
	return f, count
}
