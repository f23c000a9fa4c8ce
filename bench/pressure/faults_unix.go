//go:build unix

package pressure

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// FaultCost returns the mean time a first write to a page of a fresh
// anonymous mapping takes: one page fault, the kernel's zeroing of the
// page and, on a virtual machine, whatever the host does to back it.
func FaultCost() (time.Duration, error) {
	size := os.Getpagesize()
	b, err := syscall.Mmap(-1, 0, faultPages*size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return 0, fmt.Errorf("map %d pages: %w", faultPages, err)
	}
	defer syscall.Munmap(b)
	start := time.Now()
	for i := 0; i < len(b); i += size {
		b[i] = 1
	}
	return time.Since(start) / faultPages, nil
}
