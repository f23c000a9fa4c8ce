package gctune

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestBodyBudget: half the soft limit, at least one body, none without a
// limit.
func TestBodyBudget(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(DefaultMemoryLimit))
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
