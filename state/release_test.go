package state

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/crawl"
)

func rssFileKB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "RssFile:") {
			n, _ := strconv.Atoi(strings.Fields(line)[1])
			return n
		}
	}
	t.Skip("no RssFile")
	return 0
}

func TestReleaseMappedDropsResidentStatePages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	db := open(t, t.TempDir())
	db.Begin(nil)
	// About 40 MiB of item versions.
	for batch := 0; batch < 20; batch++ {
		var vs []crawl.ItemVersion
		for i := 0; i < 2000; i++ {
			v := version(fmt.Sprintf("item-%d-%d", batch, i), hash(batch*2000+i))
			v.Values = []any{strings.Repeat("x", 800)}
			vs = append(vs, v)
		}
		store(t, db, vs...)
	}
	// Touch every page through the map.
	n := 0
	if err := db.ForEachPending(^uint64(0), func(Version) error { n++; return nil }); err != nil || n != 40000 {
		t.Fatalf("read %d versions: %v", n, err)
	}
	before := rssFileKB(t)
	if err := db.ReleaseMapped(); err != nil {
		t.Fatal(err)
	}
	after := rssFileKB(t)
	t.Logf("RssFile %d kB -> %d kB", before, after)
	if before-after < 20_000 {
		t.Fatalf("releasing the map freed only %d kB of %d kB", before-after, before)
	}
	// The data is intact.
	n = 0
	if err := db.ForEachPending(^uint64(0), func(Version) error { n++; return nil }); err != nil || n != 40000 {
		t.Fatalf("after release: %d versions, %v", n, err)
	}
}
