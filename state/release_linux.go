//go:build linux

package state

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// mapping is the address range bbolt mapped the state file at.
type mapping struct {
	mu         sync.Mutex
	data       uintptr // bbolt's data pointer the range was found for
	start, end uintptr
	// statm is /proc/self/statm, kept open; baseline is the least
	// file-backed memory it reported right after a release: the executable
	// and other files. The least, because other goroutines may map state
	// pages again between a release and the reading.
	statm    *os.File
	baseline atomic.Int64
}

// mappedNow reads how much of the state file is mapped: the process's
// file-backed resident memory above the baseline.
func (db *DB) mappedNow() (int64, bool) {
	shared, ok := db.mapped.fileBacked()
	if !ok {
		return 0, false
	}
	return max(shared-db.mapped.baseline.Load(), 0), true
}

// fileBacked reads the process's file-backed resident memory.
func (m *mapping) fileBacked() (int64, bool) {
	if m.statm == nil {
		return 0, false
	}
	var buf [128]byte
	n, err := m.statm.ReadAt(buf[:], 0)
	if n == 0 && err != nil {
		return 0, false
	}
	// size resident shared text lib data dt, in pages
	fields := strings.Fields(string(buf[:n]))
	if len(fields) < 3 {
		return 0, false
	}
	pages, err := strconv.ParseInt(fields[2], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

// open opens /proc/self/statm; without it the DB relies on its estimate.
func (m *mapping) open() { m.statm, _ = os.Open("/proc/self/statm") }

// close closes /proc/self/statm.
func (m *mapping) close() {
	if m.statm != nil {
		_ = m.statm.Close()
	}
}

// ReleaseMapped drops the state file's mapped pages from resident memory
// now; the DB also does this by itself whenever its transactions have
// mapped more than a fixed budget. The pages stay in the page cache and are
// mapped again on their next access. Do not call it inside a function
// passed to a DB method.
func (db *DB) ReleaseMapped() error {
	// A read transaction keeps bbolt from remapping the file meanwhile.
	return db.bolt.View(func(*bolt.Tx) error { return db.releaseMapped() })
}

// releaseMapped drops the mapped pages; the caller must be inside a
// transaction (see touched).
func (db *DB) releaseMapped() error {
	m := &db.mapped
	m.mu.Lock()
	defer m.mu.Unlock()
	db.mappedBytes.Store(0)
	db.lastMapped.Store(0)
	db.checkAt.Store(db.budget / 2)
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
	// Only the file's length can be mapped: the rest of the range bbolt
	// reserved is empty, and walking it would cost more than the release.
	end := m.end
	var st unix.Stat_t
	if err := unix.Stat(db.bolt.Path(), &st); err == nil {
		page := uintptr(os.Getpagesize())
		end = min(end, m.start+(uintptr(st.Size)+page-1)/page*page)
	}
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, end-m.start, unix.MADV_DONTNEED); errno != 0 {
		return fmt.Errorf("release mapped state pages: %w", errno)
	}
	if shared, ok := m.fileBacked(); ok {
		if b := m.baseline.Load(); b == 0 || shared < b {
			m.baseline.Store(shared)
		}
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
