package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// A crawl of 1,000,000 items, whose heap stays at the soft memory limit
// for nearly all of it, ran about 5 % slower with the heap advised (five
// alternated pairs: 105.9 s against 100.3 s on the means, CPU 131.8
// against 123.7 s). Near the limit the runtime's scavenger returns free
// heap 64 KiB at a time, splitting the huge pages it returns part of, and
// khugepaged collapses them again; so once the collector's goal reaches
// nearHugeLimit quarters of the limit, the advice is taken back
// (MADV_NOHUGEPAGE): the huge pages already given stay, and the heap
// grows on 4 KiB pages from then on. This did not remove the cost: three
// pairs with it ran 107.8 s against 103.1 s, and the kernel's counters
// showed about 140 splits and 60 collapses a run, too few to explain five
// seconds. The cause is not known yet (see the README's Performance).
// A run that never comes near the limit (an unchanged rerun, a small
// crawl) keeps the advice to its end.

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
