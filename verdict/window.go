package verdict

// ErrorWindow is the share of failures among the last Size counted results,
// a sliding window over a count of results, never over time: a time window
// empties when a run slows and its share jumps on three samples.
//
// The zero value is unusable; build one with NewErrorWindow.
type ErrorWindow struct {
	ring   []bool // true marks a failure
	next   int    // ring index the next result goes to
	n      int    // results held, at most len(ring)
	failed int    // failures held
}

// NewErrorWindow returns an empty window over the last size results.
// A size below 1 is taken as 1.
func NewErrorWindow(size int) *ErrorWindow {
	if size < 1 {
		size = 1
	}
	return &ErrorWindow{ring: make([]bool, size)}
}

// Add records one counted result, evicting the oldest once the window is
// full.
func (w *ErrorWindow) Add(failed bool) {
	if w.n == len(w.ring) {
		if w.ring[w.next] {
			w.failed--
		}
	} else {
		w.n++
	}
	w.ring[w.next] = failed
	if failed {
		w.failed++
	}
	w.next = (w.next + 1) % len(w.ring)
}

// Counts returns the failures held and the results held.
func (w *ErrorWindow) Counts() (failed, of int) { return w.failed, w.n }

// Reset empties the window, as when a breaker closes after a good probe.
func (w *ErrorWindow) Reset() {
	clear(w.ring)
	w.next, w.n, w.failed = 0, 0, 0
}

// Exceeds reports whether the window holds at least minSamples results and
// the failure share among them is at least threshold.
func (w *ErrorWindow) Exceeds(threshold float64, minSamples int) bool {
	if w.n == 0 || w.n < minSamples {
		return false
	}
	return ShareAtLeast(w.failed, w.n, threshold)
}

// ShareAtLeast reports whether failed/of >= threshold. The division is done
// once, so a share of exactly the threshold (70 of 200 against 0.35)
// compares equal.
func ShareAtLeast(failed, of int, threshold float64) bool {
	if of <= 0 {
		return false
	}
	return float64(failed)/float64(of) >= threshold
}
