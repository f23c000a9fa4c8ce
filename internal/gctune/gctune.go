// Package gctune sets the garbage collector's target and soft memory limit
// the stage runs best with, unless the environment sets them.
package gctune

import (
	"math"
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

// BodyBudget is what the big response bodies being read at once may hold
// (fetch.Config.BodyBudget): half the soft memory limit in force, so that
// they and what reading them costs stay within it, and at least one body
// of maxBody bytes. Without a limit (math.MaxInt64) there is no budget: 0.
func BodyBudget(maxBody int64) int64 {
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 {
		return 0
	}
	return max(limit/2, maxBody+1)
}
