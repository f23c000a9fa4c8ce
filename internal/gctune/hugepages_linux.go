package gctune

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// applyHugePages asks for huge pages for the heap's next hugeHeapSize
// bytes when the kernel's mode and GODEBUG allow it (see hugepages.go),
// until the heap comes near its limit (see hugepages_limit.go).
func applyHugePages() {
	enabled, err := os.ReadFile(thpEnabled)
	if err != nil || !wantHugePages(thpMode(string(enabled)), os.Getenv("GODEBUG")) {
		return
	}
	beg, end, err := adviseHeap(hugeHeapSize(), hugePageSize())
	if err != nil || beg == end {
		return
	}
	dropNearLimit(func() { _ = madviseRange(beg, end, unix.MADV_NOHUGEPAGE) })
}

// madviseRange gives advice over [beg, end), a range of the heap
// adviseHeap advised (mapped for as long as the process lives: the
// runtime never unmaps its heap).
func madviseRange(beg, end uintptr, advice int) error {
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, beg, end-beg, uintptr(advice)); errno != 0 {
		return errno
	}
	return nil
}

// adviseHeap maps n bytes of heap at once (one allocation, which the
// runtime takes from fresh address space without touching it), asks for
// huge pages over the part of it aligned to pageSize, and hands it all
// back to the kernel untouched. It returns the advised range, [beg, end),
// for tests; beg == end when nothing was advised.
func adviseHeap(n, pageSize int) (beg, end uintptr, err error) {
	if n < 2*pageSize || pageSize <= 0 {
		return 0, 0, nil
	}
	b := make([]byte, n)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	ps := uintptr(pageSize)
	beg, end = (p+ps-1)/ps*ps, (p+uintptr(n))/ps*ps
	if beg < end {
		err = unix.Madvise(b[beg-p:end-p], unix.MADV_HUGEPAGE)
	}
	b = nil
	// A collection frees the allocation, and the scavenge that follows
	// returns its pages, untouched, so they count against neither the
	// heap's goal nor its memory limit.
	debug.FreeOSMemory()
	if err != nil {
		return 0, 0, err
	}
	return beg, end, nil
}

// hugePageSize returns the kernel's huge page size, 2 MiB when it does not
// say.
func hugePageSize() int {
	b, err := os.ReadFile(thpPageSize)
	if err != nil {
		return 2 << 20
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 2 << 20
	}
	return n
}
