package crawl

import "fmt"

// Shard is one of Count shards of a config's crawl: every shard walks the
// listing pages, sitemaps and robots.txt files, and fetches and stores
// only the item pages and items it owns, so Count processes share one
// site's item pages without talking to each other. The zero Shard is the
// whole crawl.
type Shard struct {
	// Index counts from 0 to Count-1.
	Index, Count int
}

// Sharded reports whether s is a part of the crawl rather than all of it.
func (s Shard) Sharded() bool { return s.Count > 1 }

// Valid returns an error unless s is the whole crawl or a shard in range.
func (s Shard) Valid() error {
	if s.Count == 0 && s.Index == 0 {
		return nil
	}
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d of %d: want an index from 0 to the count less one", s.Index, s.Count)
	}
	return nil
}

// String names the shard as its state folder and export prefix do:
// "2-of-4".
func (s Shard) String() string { return fmt.Sprintf("%d-of-%d", s.Index, s.Count) }

// Owns reports whether the shard fetches the item page at a normalised
// URL, or stores the item with a key that a listing page yielded: the
// 64-bit FNV-1a hash of the text, mixed by MurmurHash3's finalizer,
// modulo Count, is Index. (FNV-1a alone, modulo a power of two, depends
// only on the low bits of each byte: URLs that differ in letters such as
// a, e, i would crowd into a few shards.) The hash is fixed, so a page
// and an item stay with one shard from run to run for a given Count (a
// new Count moves most of them: see "Changing the shard count" in
// docs/shards.md).
func (s Shard) Owns(text string) bool {
	if !s.Sharded() {
		return true
	}
	return fmix64(fnv1a(text))%uint64(s.Count) == uint64(s.Index)
}

// fnv1a is the 64-bit FNV-1a hash of text, as hash/fnv's New64a gives
// it, without the hasher and the byte copy it takes for every link.
func fnv1a(text string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(text); i++ {
		h ^= uint64(text[i])
		h *= prime
	}
	return h
}

// fmix64 is MurmurHash3's 64-bit finalizer: every bit of its result
// depends on every bit of h.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// keepOwn drops from a completion what another shard owns: item links by
// their URL, and the items a listing page yielded (or its memo stands
// for) by their key. An item page's items stay: the page is the shard's,
// whatever their keys. The page memo was made before, from everything
// the page held, so a replay gives every shard its own part again.
func (s Shard) keepOwn(c *completion) {
	if !s.Sharded() {
		return
	}
	c.links = s.ownLinks(c.links)
	c.due = s.ownLinks(c.due)
	if c.q.Kind == KindItem {
		return
	}
	items := make([]ItemVersion, 0, len(c.items))
	for _, it := range c.items {
		if s.Owns(it.Key) {
			items = append(items, it)
		}
	}
	c.items = items
	var touched []ItemRef
	for _, it := range c.touched {
		if s.Owns(it.Key) {
			touched = append(touched, it)
		}
	}
	c.touched = touched
}

// ownLinks returns the links the shard follows: listing pages, sitemaps
// and the item links it owns, in a new slice (the page memo holds the
// page's own).
func (s Shard) ownLinks(links []Entry) []Entry {
	if links == nil {
		return nil
	}
	kept := make([]Entry, 0, len(links))
	for _, l := range links {
		if l.Kind != KindItem || s.Owns(l.URL) {
			kept = append(kept, l)
		}
	}
	return kept
}
