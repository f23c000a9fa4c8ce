// Package gctune sets the garbage collector's target and soft memory limit
// the stage runs best with, unless the environment sets them; the limit
// follows the memory limit of the process's cgroup, when it has one. It
// also sizes what the stage holds in memory by the limit in force: the
// response bodies read at once (BodyBudget) and the state's recent parts
// (RecentURLs). On Linux it asks the kernel to back the heap of a run
// that resumes a small state with transparent huge pages, until the heap
// comes near its limit (AdviseHugePagesFor; hugepages.go,
// hugepages_limit.go).
package gctune

import (
	"math"
	"os"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// DefaultGCPercent is the garbage collector's target when the environment
// does not set GOGC. Parsing HTML and bbolt's copy-on-write pages make a
// crawl allocate fast but keep little alive, so collecting at 200 % of the
// live heap instead of 100 % saves about a tenth of the CPU.
const DefaultGCPercent = 200

// DefaultMemoryLimit is the soft heap limit when the environment does not
// set GOMEMLIMIT and no cgroup memory limit asks for less (see
// MemoryLimitFor): past it the collector runs as often as needed, so the
// headroom DefaultGCPercent buys stays bounded however large the crawl.
// What the heap keeps alive grows a little with the state (the runs' Bloom
// filters, bbolt's free list: about 22 MiB at 1,000,000 items), and the
// nearer the limit is to it, the more often the collector runs. On the
// 2-core virtual machine it was measured on (bench/stagebench, first
// crawls, alternated), 200,000 items ran about 14 % faster under 48 MiB
// than under 32 MiB, where the collector ran more often and the runtime
// handed pages back to the kernel that it then faulted in again; 64 MiB
// ran no faster than 48 MiB at 200,000 items (nine pairs, means within
// 2 %) and faster at 1,000,000 in four pairs of four (109.6 to 117.1 s
// against 114.8 to 135.7 s, 9 % on the means).
const DefaultMemoryLimit = 64 << 20

// MemoryLimitFor returns the soft memory limit for a process whose cgroup
// limits its memory to cgroupLimit bytes (0: no limit, or none known):
// half the cgroup's limit when that is below DefaultMemoryLimit, which
// leaves the other half to what the Go heap does not hold (the runtime's
// own memory, goroutine stacks, the binary's pages, and the page cache of
// the state file and the Parquet files, which the cgroup charges too), and
// DefaultMemoryLimit otherwise. Under a 64 MiB cgroup it is 32 MiB, under
// 96 MiB 48 MiB.
func MemoryLimitFor(cgroupLimit uint64) int64 {
	if cgroupLimit == 0 || cgroupLimit/2 >= DefaultMemoryLimit {
		return DefaultMemoryLimit
	}
	return int64(cgroupLimit / 2)
}

// Apply sets DefaultGCPercent unless GOGC is set, and the soft memory
// limit MemoryLimitFor gives for the process's cgroup unless GOMEMLIMIT
// is set. A program calls it once, first; the stage then asks for huge
// pages for the heap when its run resumes a small state
// (AdviseHugePagesFor).
func Apply() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(DefaultGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		cgroupLimit, err := memlimit.FromCgroup()
		if err != nil { // no cgroup, no limit, or not Linux
			cgroupLimit = 0
		}
		debug.SetMemoryLimit(MemoryLimitFor(cgroupLimit))
	}
}

// BodyBudget is what the big response bodies being read at once may hold
// (fetch.Config.BodyBudget): half the soft memory limit in force (16 MiB
// under a 64 MiB cgroup), so that
// they and what reading them costs stay within it, and at least one body
// of maxBody bytes. Without a limit (math.MaxInt64) there is no budget: 0.
func BodyBudget(maxBody int64) int64 {
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 {
		return 0
	}
	return max(limit/2, maxBody+1)
}

// RecentURLs is how many URLs the state's URL index keeps in its recent
// part, in memory, before it folds them into a run of the index on disk
// (state.Options.RecentURLs; the item records' recent part holds half as
// many): 32Ki, and one more for each 256 bytes of the soft memory limit
// in force beyond 32 MiB, up to 64Ki. Under DefaultMemoryLimit (and
// without a limit) that is 64Ki URLs and 32Ki records, about 8 MiB of
// heap; under a 64 MiB cgroup (a 32 MiB limit) 32Ki and 16Ki, 4 MiB, as
// it was everywhere before. Larger recent parts make fewer runs, so
// fewer merges and fewer runs for a lookup to try. At 1,000,000 items
// (bench/stagebench, first crawls, alternated) the two sittings this was
// measured in disagreed: in one, on a slow machine, 64Ki took 11 % less
// CPU than 32Ki (two pairs) and 128Ki 2 to 5 % less than 64Ki; in the
// other, on a faster one, 64Ki took the same as 32Ki (two pairs) and
// 128Ki 4 % more (three pairs; the collector runs more often with the
// larger maps under the limit). Under the 32 MiB limit of a 64 MiB
// cgroup, 64Ki ran the 1M crawl at 3,143 pages/s (one run, the Go heap's
// peak 38.9 MiB) where 32Ki had run at 4,644 (34.5 MiB).
func RecentURLs() int {
	const lo, hi = 32 << 10, 64 << 10
	limit := debug.SetMemoryLimit(-1)
	if limit <= 32<<20 {
		return lo
	}
	return int(min(lo+(limit-32<<20)/256, hi))
}
