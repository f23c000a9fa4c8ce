package gctune

import (
	"math"
	"runtime/debug"
	"strings"
	"sync"
)

// The Go heap grows in mappings the runtime makes as it needs them, and
// Linux backs each with 4 KiB pages as they are first touched: a page
// fault each. Under transparent huge pages in "madvise" mode (the default
// of many distributions) the runtime does not ask for huge pages for the
// heap (it stopped in Go 1.21.1). On the virtual machine this was
// measured on (a Firecracker guest, where the host backs the guest's
// memory as the guest touches it), writing to 16 MiB of fresh memory
// took 43 to 85 ms in 4,096 faults, and 1 to 35 ms in 8 under
// MADV_HUGEPAGE (bench/pressure prints both). An unchanged rerun of
// 10,000 items touches about 12 MiB of fresh heap: it took 0.112 to
// 0.135 s with 3,000 to 3,400 faults, and 0.081 to 0.097 s with 544 to
// 1,023 once the heap asked for huge pages (three program runs of five
// reruns each way, alternated; warm, the state file in the page cache). applyHugePages therefore maps the heap's
// next bytes up to the soft memory limit (at most MaxHugeHeap) at once,
// asks for huge pages over them, and hands them back to the kernel
// unused: the heap then grows into them, 2 MiB a fault. The kernel falls
// back to 4 KiB pages where it has no huge page to give or a cgroup's
// limit refuses one. The heap beyond what was advised grows as before.
//
// A long run pays for it: a first crawl of 1,000,000 items, whose heap
// stays at the soft limit for 100 s, took 15 % more CPU with the heap
// advised (bench/stagebench, six runs alternated with six of
// GODEBUG=disablethp=1: 145.0 s against 126.4 on the means), and 13 %
// more when the advice was taken back and the huge pages split as soon
// as the heap neared the limit (138.8 s against 123.3, three each),
// while the same allocation advised MADV_NORMAL cost nothing (127.3 s
// against 129.6, three each). The extra time shows in the program's own
// memory writes (runtime.memclrNoHeapPointers 4.3 % of the samples
// against 1.7 %), not in the kernel's counters; why a process that once
// advised part of its heap touches memory more slowly on this machine is
// not known. So the stage asks only for a run that resumes a state no
// larger than the soft limit (AdviseHugePagesFor), as an unchanged rerun
// does. A first crawl, which starts from no state, never asks; at 10,000
// items it took the same time either way.

// AdviseHugePagesFor asks for huge pages for the heap (see above) when
// the run about to start resumes a state of stateBytes bytes no larger
// than the soft memory limit in force (0: a new state), and only when a
// limit is in force (Apply sets one) and the kernel's mode and GODEBUG
// allow it (wantHugePages). It asks once a process; later calls do
// nothing.
func AdviseHugePagesFor(stateBytes int64) {
	if smallState(stateBytes, debug.SetMemoryLimit(-1)) {
		adviseOnce.Do(applyHugePages)
	}
}

// adviseOnce makes AdviseHugePagesFor ask once a process.
var adviseOnce sync.Once

// smallState reports whether a run that resumes a state of stateBytes
// bytes asks for huge pages under a soft memory limit of limit bytes:
// the state exists and is no larger than the limit, and a limit is in
// force (without one, as in a test process, it never asks).
func smallState(stateBytes, limit int64) bool {
	return stateBytes > 0 && limit != math.MaxInt64 && stateBytes <= limit
}

// MaxHugeHeap bounds the heap AdviseHugePagesFor asks huge pages for.
const MaxHugeHeap = 256 << 20

// thpEnabled is the file that holds the kernel's transparent huge page
// mode, and thpPageSize the one that holds the huge page size.
const (
	thpEnabled  = "/sys/kernel/mm/transparent_hugepage/enabled"
	thpPageSize = "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size"
)

// thpMode returns the mode a transparent huge page "enabled" file's
// content selects ("always [madvise] never" selects madvise), "" when it
// selects none.
func thpMode(enabled string) string {
	for f := range strings.FieldsSeq(enabled) {
		if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
			return f[1 : len(f)-1]
		}
	}
	return ""
}

// wantHugePages reports whether applyHugePages asks for huge pages for
// the heap: only in "madvise" mode ("always" gives them unasked, "never"
// never), and not when GODEBUG holds disablethp=1, the runtime's own
// switch that keeps them off its heap.
func wantHugePages(mode, godebug string) bool {
	if mode != "madvise" {
		return false
	}
	for kv := range strings.SplitSeq(godebug, ",") {
		if strings.TrimSpace(kv) == "disablethp=1" {
			return false
		}
	}
	return true
}

// hugeHeapSize is how much heap applyHugePages asks huge pages for: the
// soft memory limit in force, at most MaxHugeHeap.
func hugeHeapSize() int {
	return int(min(debug.SetMemoryLimit(-1), MaxHugeHeap))
}
