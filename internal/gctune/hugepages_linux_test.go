package gctune

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAdviseHeapAsksForHugePages: the heap range adviseHeap returns is
// huge-page aligned, nearly all it mapped, and every mapping over it
// carries the kernel's flag for MADV_HUGEPAGE ("hg" in /proc/self/smaps).
func TestAdviseHeapAsksForHugePages(t *testing.T) {
	const n, page = 16 << 20, 2 << 20
	beg, end, err := adviseHeap(n, page)
	if errors.Is(err, unix.EINVAL) {
		t.Skip("the kernel has no transparent huge pages:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if beg%page != 0 || end%page != 0 || end-beg < n-page {
		t.Fatalf("advised [%#x, %#x): want %d bytes or more, aligned to %d", beg, end, n-page, page)
	}
	maps, err := smapsFlags()
	if err != nil {
		t.Fatal(err)
	}
	covered := beg
	for _, m := range maps {
		if m.end <= beg || m.start >= end {
			continue
		}
		if !strings.Contains(" "+m.flags+" ", " hg ") {
			t.Errorf("mapping [%#x, %#x) over the advised range has flags %q, no hg", m.start, m.end, m.flags)
		}
		if m.start <= covered {
			covered = max(covered, m.end)
		}
	}
	if covered < end {
		t.Errorf("the mappings cover the advised range [%#x, %#x) only up to %#x", beg, end, covered)
	}
}

// mapping is one line of /proc/self/smaps and its VmFlags.
type mapping struct {
	start, end uintptr
	flags      string
}

// smapsFlags reads the process's mappings and their flags.
func smapsFlags() ([]mapping, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && len(out) > 0 {
			out[len(out)-1].flags = strings.TrimSpace(rest)
			continue
		}
		span, _, _ := strings.Cut(line, " ")
		lo, hi, ok := strings.Cut(span, "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, mapping{start: uintptr(start), end: uintptr(end)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read /proc/self/smaps: %w", err)
	}
	return out, nil
}

// TestMadviseRangeTakesTheAdviceBack: after MADV_NOHUGEPAGE over the
// advised range, its mappings carry the "nh" flag and no longer "hg".
func TestMadviseRangeTakesTheAdviceBack(t *testing.T) {
	beg, end, err := adviseHeap(8<<20, 2<<20)
	if errors.Is(err, unix.EINVAL) {
		t.Skip("the kernel has no transparent huge pages:", err)
	}
	if err != nil || beg == end {
		t.Fatalf("adviseHeap: [%#x, %#x), %v", beg, end, err)
	}
	if err := madviseRange(beg, end, unix.MADV_NOHUGEPAGE); err != nil {
		t.Fatal(err)
	}
	maps, err := smapsFlags()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range maps {
		if m.end <= beg || m.start >= end {
			continue
		}
		flags := " " + m.flags + " "
		if strings.Contains(flags, " hg ") || !strings.Contains(flags, " nh ") {
			t.Errorf("mapping [%#x, %#x) has flags %q, want nh and no hg", m.start, m.end, m.flags)
		}
	}
}
