package exeadvice

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Apply advises MADV_RANDOM for every mapping of the executable, as
// /proc/self/maps lists them.
func Apply() error {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return fmt.Errorf("find the executable: %w", err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return fmt.Errorf("list the mappings: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		start, end, path, ok := parseMapping(sc.Text())
		if !ok || path != exe {
			continue
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_RANDOM); errno != 0 {
			return fmt.Errorf("advise %x-%x of %s: %w", start, end, exe, errno)
		}
	}
	return sc.Err()
}

// parseMapping reads a line of /proc/self/maps: "start-end perms offset
// dev inode path", the path (which may hold spaces) absent for an
// anonymous mapping.
func parseMapping(line string) (start, end uintptr, path string, ok bool) {
	if _, err := fmt.Sscanf(line, "%x-%x", &start, &end); err != nil || end <= start {
		return 0, 0, "", false
	}
	rest := line
	for range 5 {
		_, rest, _ = strings.Cut(strings.TrimLeft(rest, " "), " ")
	}
	return start, end, strings.TrimLeft(rest, " "), true
}
