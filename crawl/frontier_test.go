package crawl

import "testing"

func TestFrontierOrderAndBounds(t *testing.T) {
	f := newFrontier(3)
	for i := uint64(1); i <= 3; i++ {
		if !f.pushBack(Queued{Seq: i}, false) {
			t.Fatalf("push %d refused below capacity", i)
		}
	}
	if f.pushBack(Queued{Seq: 4}, false) {
		t.Fatal("a full frontier must refuse an item page")
	}
	f.pushFront(Queued{Seq: 99}) // listing pages go first, even when full
	if f.pushBack(Queued{Seq: 5}, true); f.len() != 5 {
		t.Fatalf("len = %d, want 5", f.len())
	}
	// The ring grew for the forced entries; item pages still see the limit.
	if f.pushBack(Queued{Seq: 6}, false) {
		t.Fatal("growing the ring must not raise the limit for item pages")
	}
	var got []uint64
	for {
		q, ok := f.popFront()
		if !ok {
			break
		}
		got = append(got, q.Seq)
	}
	want := []uint64{99, 1, 2, 3, 5}
	if len(got) != len(want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order = %v, want %v", got, want)
		}
	}
}
