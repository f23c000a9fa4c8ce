//go:build linux

package state

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ReleaseMapped tells the kernel the process no longer needs the state
// file's pages mapped. bbolt reads through a memory map, so every page a
// crawl touches stays resident and resident memory would grow with the
// number of items; after this call the pages stay in the page cache and are
// mapped again on their next access. It must not run while a write
// transaction may remap the file: callers run it while their writer is
// idle.
func (db *DB) ReleaseMapped() error {
	var st unix.Stat_t
	if err := unix.Stat(db.bolt.Path(), &st); err != nil {
		return fmt.Errorf("stat %s: %w", db.bolt.Path(), err)
	}
	dev := fmt.Sprintf("%02x:%02x", unix.Major(st.Dev), unix.Minor(st.Dev))
	ino := strconv.FormatUint(st.Ino, 10)
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return fmt.Errorf("read memory maps: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 7f1c2d000000-7f1c3d000000 r--s 00000000 fd:01 1234 /path/state.db
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[4] != ino || fields[3] != dev {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED); errno != 0 {
			return fmt.Errorf("release mapped state pages: %w", errno)
		}
	}
	return sc.Err()
}
