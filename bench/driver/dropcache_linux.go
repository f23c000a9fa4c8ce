package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropCache asks the kernel to drop the page cache of the file at path (its
// pages that no process maps), so that a crawler started next reads its
// executable into its own cgroup, as in a new container, instead of using
// pages charged to whoever read them first.
func dropCache(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
