package state

import (
	"sync"

	"github.com/bits-and-blooms/bloom/v3"
	bolt "go.etcd.io/bbolt"
)

// A crawl asks for keys that are not there more than for any other: every
// new URL is looked up in the URL index before it is queued, every new item
// in the items bucket before its record is written. Each such lookup reads
// a leaf of a tree that, on a large crawl, is far larger than the page
// cache a memory limit leaves (at 1,000,000 items, 64 MB of URL index and
// more of item records), so each is a read from disk. A keyFilter, a Bloom
// filter of the keys a tree holds, answers most of them from memory: a key
// it has not seen is not in the tree. Open fills one for the URL index and
// one for the items bucket; a fold adds the keys it writes, before the
// recent part lets go of them (a reader that misses them in the recent
// part's map finds them in the filter). Nothing else adds keys to those
// trees while the state is open (an upgrade or a repair runs before the
// filter is filled); a key deleted stays in the filter, which only costs a
// lookup.

// keyFilterFalsePositives is the share of absent keys a filter lets
// through to the tree: about 9.6 bits of memory per key.
const keyFilterFalsePositives = 0.01

// keyFilterMinCapacity is the fewest keys a filter is sized for.
const keyFilterMinCapacity = 64 << 10

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

// grow adds a filter sized for n keys, with as many hash functions as the
// first (a key's locations are computed once for all).
func (f *keyFilter) grow(n uint) {
	m, k := bloom.EstimateParameters(n, keyFilterFalsePositives)
	if len(f.filters) > 0 {
		k = f.filters[0].K()
	}
	f.filters = append(f.filters, bloom.New(m, k))
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
	f.mu.RLock()
	defer f.mu.RUnlock()
	if len(f.filters) == 1 {
		return f.filters[0].Test(key)
	}
	locations := bloom.Locations(key, f.filters[0].K())
	for _, b := range f.filters {
		if b.TestLocations(locations) {
			return true
		}
	}
	return false
}

// fillKeyFilter returns a filter holding every key of bucket, sized for
// at least n keys.
func fillKeyFilter(bucket *bolt.Bucket, n uint) *keyFilter {
	f := newKeyFilter(n)
	c := bucket.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		f.add(k)
	}
	return f
}
