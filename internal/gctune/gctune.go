// Package gctune sets the garbage collector's target and soft memory limit
// the stage runs best with, unless the environment sets them.
package gctune

import (
	"os"
	"runtime/debug"
)

// DefaultGCPercent is the garbage collector's target when the environment
// does not set GOGC. Parsing HTML and bbolt's copy-on-write pages make a
// crawl allocate fast but keep little alive, so collecting at 200 % of the
// live heap instead of 100 % saves about a tenth of the CPU.
const DefaultGCPercent = 200

// DefaultMemoryLimit is the soft heap limit when the environment does not
// set GOMEMLIMIT: past it the collector runs as often as needed, so the
// headroom DefaultGCPercent buys stays bounded however large the crawl.
const DefaultMemoryLimit = 32 << 20

// Apply sets DefaultGCPercent and DefaultMemoryLimit unless GOGC or
// GOMEMLIMIT are set.
func Apply() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(DefaultMemoryLimit)
	}
}
