package exeadvice

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestApplyAdvisesEveryMappingOfTheExecutable: after Apply, each mapping
// of the test binary carries the random-read advice ("rr" in its VmFlags).
func TestApplyAdvisesEveryMappingOfTheExecutable(t *testing.T) {
	if err := Apply(); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mappings, advised := 0, 0
	current := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if _, _, _, path, ok := parseMapping(line); ok {
			current = path
			continue
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && current == exe {
			mappings++
			if strings.Contains(" "+flags+" ", " rr ") {
				advised++
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if mappings == 0 || advised != mappings {
		t.Errorf("%d of the executable's %d mappings advised, want all (at least one)", advised, mappings)
	}
}

func TestParseMapping(t *testing.T) {
	for _, tc := range []struct {
		line        string
		perms, path string
		start       uintptr
		ok          bool
	}{
		{"00400000-0085e000 r-xp 00000000 fd:01 1234   /usr/bin/a b (deleted)", "r-xp", "/usr/bin/a b (deleted)", 0x400000, true},
		{"7f0000000000-7f0000021000 rw-p 00000000 00:00 0 ", "rw-p", "", 0x7f0000000000, true},
		{"Rss:                 128 kB", "", "", 0, false},
		{"VmFlags: rd ex mr mw me", "", "", 0, false},
	} {
		start, _, perms, path, ok := parseMapping(tc.line)
		if ok != tc.ok || perms != tc.perms || path != tc.path || start != tc.start {
			t.Errorf("parseMapping(%q) = %x, %q, %q, %v; want %x, %q, %q, %v", tc.line, start, perms, path, ok,
				tc.start, tc.perms, tc.path, tc.ok)
		}
	}
}
