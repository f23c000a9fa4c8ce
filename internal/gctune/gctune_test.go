package gctune

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestBodyBudget: half the soft limit, at least one body, none without a
// limit.
func TestBodyBudget(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(32 << 20))
	for _, tt := range []struct{ maxBody, want int64 }{{10 << 20, 16 << 20}, {20 << 20, 20<<20 + 1}} {
		if got := BodyBudget(tt.maxBody); got != tt.want {
			t.Errorf("BodyBudget(%d) under 32 MiB = %d, want %d", tt.maxBody, got, tt.want)
		}
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if got := BodyBudget(10 << 20); got != 0 {
		t.Errorf("BodyBudget without a limit = %d, want 0", got)
	}
}

// TestMemoryLimitFor: the default without a cgroup limit or under a large
// one, half the cgroup's below twice the default.
func TestMemoryLimitFor(t *testing.T) {
	for _, tt := range []struct {
		cgroup uint64
		want   int64
	}{
		{0, DefaultMemoryLimit},
		{1 << 40, DefaultMemoryLimit},
		{2 * DefaultMemoryLimit, DefaultMemoryLimit},
		{2*DefaultMemoryLimit - 2, DefaultMemoryLimit - 1},
		{64 << 20, 32 << 20},
		{1 << 20, 512 << 10},
	} {
		if got := MemoryLimitFor(tt.cgroup); got != tt.want {
			t.Errorf("MemoryLimitFor(%d) = %d, want %d", tt.cgroup, got, tt.want)
		}
	}
}

// TestRecentURLs: 32Ki and one more for each 256 bytes of the soft limit
// beyond 32 MiB, up to 64Ki; 64Ki without a limit.
func TestRecentURLs(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	for _, tt := range []struct {
		limit int64
		want  int
	}{{math.MaxInt64, 64 << 10}, {DefaultMemoryLimit, 64 << 10}, {MemoryLimitFor(64 << 20), 32 << 10}, {36 << 20, 48 << 10}, {40 << 20, 64 << 10}, {8 << 20, 32 << 10}} {
		debug.SetMemoryLimit(tt.limit)
		if got := RecentURLs(); got != tt.want {
			t.Errorf("RecentURLs() under a limit of %d = %d, want %d", tt.limit, got, tt.want)
		}
	}
}
