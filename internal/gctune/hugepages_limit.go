package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// A run whose heap comes near the soft memory limit keeps on huge pages
// only what it had by then: once the collector's goal reaches
// nearHugeLimit quarters of the limit, the advice is taken back
// (MADV_NOHUGEPAGE), and the heap grows on 4 KiB pages from then on,
// which bounds what stays on huge pages. That does not make a long run as
// fast as one that never asked (hugepages.go), so AdviseHugePagesFor
// asks only for runs that resume a state no larger than the limit (an
// unchanged rerun of 10,000 items allocates about 15 MiB in all, and
// keeps the advice to its end).

// nearHugeLimit is the share of the soft memory limit, in quarters, that
// the collector's goal reaches when the advice is taken back.
const nearHugeLimit = 3

// dropNearLimit takes the huge page advice over [beg, end) back, with
// undo, after the first collection whose goal reaches nearHugeLimit
// quarters of the soft memory limit. It looks after each collection: a
// cleanup of an object only the collector sees (gcTick) runs after the
// cycle that found it unreachable, and arms the next one until then.
func dropNearLimit(undo func()) {
	sample := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	var arm func()
	arm = func() {
		runtime.AddCleanup(new(gcTick), func(struct{}) {
			metrics.Read(sample)
			limit := debug.SetMemoryLimit(-1)
			if sample[0].Value.Kind() == metrics.KindUint64 && nearLimit(sample[0].Value.Uint64(), limit) {
				undo()
				return
			}
			arm()
		}, struct{}{})
	}
	arm()
}

// nearLimit reports whether a collector's goal of goal bytes is near the
// soft memory limit (nearHugeLimit quarters of it, or more).
func nearLimit(goal uint64, limit int64) bool {
	return limit > 0 && goal >= uint64(limit)/4*nearHugeLimit
}

// gcTick is the object whose cleanup dropNearLimit arms. It holds a
// pointer so that it is an allocation of its own: the tiny allocator
// packs small objects without pointers together, and frees them only
// together.
type gcTick struct{ _ *byte }
