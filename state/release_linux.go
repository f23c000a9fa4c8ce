//go:build linux

package state

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// mapping is the address range bbolt mapped the state file at.
type mapping struct {
	mu         sync.Mutex
	data       uintptr // bbolt's data pointer the range was found for
	start, end uintptr
}

// ReleaseMapped tells the kernel the process no longer needs the state
// file's pages mapped. bbolt reads through a memory map, so every page a
// crawl touches stays resident and resident memory would grow with the
// number of items; after this call the pages stay in the page cache and are
// mapped again on their next access. bbolt remaps the file only while a
// transaction commits, so ReleaseMapped is safe between commits and inside
// a transaction's function; pages the transaction reads again are simply
// faulted in again.
func (db *DB) ReleaseMapped() error {
	m := &db.mapped
	m.mu.Lock()
	defer m.mu.Unlock()
	data := db.bolt.Info().Data
	if data != m.data {
		start, end, err := findMapping(data)
		if err != nil {
			return err
		}
		m.data, m.start, m.end = data, start, end
		// Random access: no read-ahead, so no large folios mapped whole.
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_RANDOM)
	}
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED); errno != 0 {
		return fmt.Errorf("release mapped state pages: %w", errno)
	}
	return nil
}

// findMapping reads the address range of the mapping holding addr.
func findMapping(addr uintptr) (uintptr, uintptr, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, 0, fmt.Errorf("read memory maps: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 7f1c2d000000-7f1c3d000000 r--s 00000000 fd:01 1234 /path/state.db
		lo, rest, ok := strings.Cut(sc.Text(), "-")
		if !ok {
			continue
		}
		hi, _, _ := strings.Cut(rest, " ")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 == nil && err2 == nil && uint64(addr) >= start && uint64(addr) < end {
			return uintptr(start), uintptr(end), nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("read memory maps: %w", err)
	}
	return 0, 0, fmt.Errorf("state file mapping at %#x not found", addr)
}
