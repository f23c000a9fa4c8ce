package pressure

import (
	"fmt"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// HugeFaultCost returns the time a first write to each 4 KiB of
// hugeBytes of a fresh anonymous mapping takes when the mapping is
// advised MADV_HUGEPAGE (as internal/gctune advises the stage's heap):
// a fault for each huge page the kernel gives, one for each 4 KiB page
// where it gives none.
func HugeFaultCost() (time.Duration, error) {
	const align = 2 << 20
	m, err := unix.Mmap(-1, 0, hugeBytes+align, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return 0, fmt.Errorf("map %d bytes: %w", hugeBytes+align, err)
	}
	defer unix.Munmap(m)
	off := (align - int(uintptr(unsafe.Pointer(&m[0]))%align)) % align
	b := m[off : off+hugeBytes]
	if err := unix.Madvise(b, unix.MADV_HUGEPAGE); err != nil {
		return 0, fmt.Errorf("madvise MADV_HUGEPAGE: %w", err)
	}
	size := os.Getpagesize()
	start := time.Now()
	for i := 0; i < len(b); i += size {
		b[i] = 1
	}
	return time.Since(start), nil
}
