package buildinfo

import (
	"os"
	"runtime/debug"
)

// DefaultGCPercent is the garbage collector's target when the environment
// does not set GOGC. Parsing HTML and bbolt's copy-on-write pages make a
// crawl allocate fast but keep little alive, so collecting at 200 % of the
// live heap instead of 100 % saves about a tenth of the CPU for a few tens
// of MiB of heap.
const DefaultGCPercent = 200

// TuneGC applies DefaultGCPercent unless GOGC is set.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultGCPercent)
	}
}
