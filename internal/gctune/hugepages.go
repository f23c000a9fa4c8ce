package gctune

import (
	"runtime/debug"
	"strings"
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
// reruns each way, alternated). Apply therefore maps the heap's next
// bytes up to the soft memory limit (at most MaxHugeHeap) at once, asks
// for huge pages over them, and hands them back to the kernel unused:
// the heap then grows into them, 2 MiB a fault. The kernel falls back to
// 4 KiB pages where it has no huge page to give or a cgroup's limit
// refuses one; the runtime's scavenger, which returns free heap to the
// kernel in smaller pieces, splits a huge page it returns part of. The
// heap beyond what was advised grows as before. At 1,000,000 items the
// advice costs about 5 % (hugepages_limit.go).

// MaxHugeHeap bounds the heap Apply asks huge pages for.
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

// wantHugePages reports whether Apply asks for huge pages for the heap:
// only in "madvise" mode ("always" gives them unasked, "never" never),
// and not when GODEBUG holds disablethp=1, the runtime's own switch that
// keeps them off its heap.
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

// hugeHeapSize is how much heap Apply asks huge pages for: the soft
// memory limit in force, at most MaxHugeHeap.
func hugeHeapSize() int {
	return int(min(debug.SetMemoryLimit(-1), MaxHugeHeap))
}
