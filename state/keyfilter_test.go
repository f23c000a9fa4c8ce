package state

import (
	"encoding/binary"
	"testing"
)

// TestKeyFilterHoldsEveryKeyItWasGiven: a filter that grew past the size
// it began with still holds every key added (no false negatives), and lets
// few absent keys through.
func TestKeyFilterHoldsEveryKeyItWasGiven(t *testing.T) {
	f := newKeyFilter(1000)
	const n = 5 * keyFilterMinCapacity // three filters: for 64Ki, 128Ki, 384Ki keys
	key := func(i int) []byte { return binary.BigEndian.AppendUint64([]byte("key-"), uint64(i)) }
	for i := range n {
		f.add(key(i))
	}
	if len(f.filters) != 3 {
		t.Errorf("%d filters after %d keys, want 3", len(f.filters), n)
	}
	for i := range n {
		if !f.mayHold(key(i)) {
			t.Fatalf("key %d added, not held", i)
		}
	}
	through := 0
	for i := n; i < 2*n; i++ {
		if f.mayHold(key(i)) {
			through++
		}
	}
	// Each filter lets about 1 % through; a key is tested against each.
	if rate := float64(through) / n; rate > 0.04 {
		t.Errorf("%.3f of absent keys let through, want at most 0.04", rate)
	}
	var none *keyFilter
	none.add(key(1))
	if !none.mayHold(key(1)) || !none.mayHold(key(2)) {
		t.Error("a nil filter (none filled) must let every key through")
	}
}
