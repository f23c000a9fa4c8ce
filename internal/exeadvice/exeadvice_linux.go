package exeadvice

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Apply advises MADV_RANDOM for every mapping of the process's code, as
// /proc/self/maps lists them: of each file mapped executable (the binary,
// and the C library and loader when it links them), all its mappings.
func Apply() error {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return fmt.Errorf("list the mappings: %w", err)
	}
	type mapping struct {
		start, end uintptr
		path       string
	}
	var files []mapping
	code := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		start, end, perms, path, ok := parseMapping(sc.Text())
		if !ok || !strings.HasPrefix(path, "/") {
			continue
		}
		files = append(files, mapping{start, end, path})
		if strings.Contains(perms, "x") {
			code[path] = true
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for _, m := range files {
		if !code[m.path] {
			continue
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_RANDOM); errno != 0 {
			return fmt.Errorf("advise %x-%x of %s: %w", m.start, m.end, m.path, errno)
		}
	}
	return nil
}

// parseMapping reads a line of /proc/self/maps: "start-end perms offset
// dev inode path", the path (which may hold spaces) absent for an
// anonymous mapping.
func parseMapping(line string) (start, end uintptr, perms, path string, ok bool) {
	if _, err := fmt.Sscanf(line, "%x-%x %s", &start, &end, &perms); err != nil || end <= start {
		return 0, 0, "", "", false
	}
	rest := line
	for range 5 {
		_, rest, _ = strings.Cut(strings.TrimLeft(rest, " "), " ")
	}
	return start, end, perms, strings.TrimLeft(rest, " "), true
}
