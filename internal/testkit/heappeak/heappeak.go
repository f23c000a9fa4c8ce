// Package heappeak measures the largest live heap the garbage collector
// finds while a function runs, for tests that bound what code holds in
// memory (not what it allocates and lets go, nor how long it takes).
package heappeak

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// liveHeap is the runtime metric of the heap the last collection found
// reachable.
const liveHeap = "/gc/heap/live:bytes"

// Measure runs f and returns the largest live heap any collection during
// it found, in bytes, and the live heap before it. While f runs the
// collector's target is 10 %, so a collection follows every tenth of
// growth and the peak is seen within about that much. The process's
// other goroutines count too: measure with nothing else running.
func Measure(f func()) (peak, before uint64) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	before = read()
	var (
		mu      sync.Mutex
		stopped bool
	)
	peak = before
	var arm func()
	arm = func() {
		// A finalizer runs after the collection that found its object
		// unreachable: it reads what that collection found, and arms
		// the next one.
		runtime.SetFinalizer(new([16]byte), func(*[16]byte) {
			v := read()
			mu.Lock()
			defer mu.Unlock()
			if stopped {
				return
			}
			peak = max(peak, v)
			arm()
		})
	}
	arm()
	f()
	runtime.GC()
	v := read()
	mu.Lock()
	defer mu.Unlock()
	stopped = true
	return max(peak, v), before
}

func read() uint64 {
	s := []metrics.Sample{{Name: liveHeap}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
