package crawl

import (
	"fmt"
	"hash/fnv"
	"slices"
	"testing"
)

// keepOwn leaves the page memo made from the same completion whole: a
// 304 replays what the page held, and every shard takes its part again.
func TestKeepOwnLeavesTheMemoWhole(t *testing.T) {
	var links []Entry
	for i := range 40 {
		links = append(links, Entry{URL: fmt.Sprintf("https://shop.example/item/%d", i), Kind: KindItem})
	}
	c := completion{q: Queued{Entry: Entry{Kind: KindListing}}, links: links}
	c.memo = &PageMemo{Links: c.links}
	before := slices.Clone(links)
	s := Shard{Index: 1, Count: 4}
	s.keepOwn(&c)
	if !slices.Equal(c.memo.Links, before) {
		t.Fatal("the memo's links changed with the shard's filtering")
	}
	for _, l := range c.links {
		if !s.Owns(l.URL) {
			t.Fatalf("kept %s, which shard %s does not own", l.URL, s)
		}
	}
	if len(c.links) == 0 || len(c.links) == len(before) {
		t.Fatalf("kept %d of %d links", len(c.links), len(before))
	}
}

// fnv1a is hash/fnv's FNV-1a: the shard a text goes to is fixed by it.
func TestFNV1aIsHashFNV(t *testing.T) {
	for _, text := range []string{"", "a", "https://shop.example/item/42", "ünïcode/ключ"} {
		h := fnv.New64a()
		_, _ = h.Write([]byte(text))
		if got, want := fnv1a(text), h.Sum64(); got != want {
			t.Errorf("fnv1a(%q) = %x, hash/fnv says %x", text, got, want)
		}
	}
}
