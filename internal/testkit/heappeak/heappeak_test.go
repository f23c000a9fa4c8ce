package heappeak

import "testing"

var sink, kept []byte

// TestMeasure: what a function holds counts; what it lets go does not.
func TestMeasure(t *testing.T) {
	const mb = 1 << 20
	peak, before := Measure(func() {
		held := make([][]byte, 0, 40)
		for range 40 {
			held = append(held, make([]byte, mb))
		}
		for range 100 {
			sink = make([]byte, mb) // let go at the next turn
		}
		kept = held[len(held)-1] // held until here
		sink, kept = nil, nil
	})
	if grew := peak - min(peak, before); grew < 36*mb || grew > 60*mb {
		t.Errorf("peak %d MiB over %d MiB before: want about the 40 MiB held, not the 100 MiB let go", peak/mb, before/mb)
	}
}
