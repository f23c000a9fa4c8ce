package gctune

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestTHPMode(t *testing.T) {
	for _, tt := range []struct{ enabled, want string }{
		{"always [madvise] never\n", "madvise"},
		{"[always] madvise never", "always"},
		{"always madvise [never]", "never"},
		{"always madvise never", ""},
		{"", ""},
	} {
		if got := thpMode(tt.enabled); got != tt.want {
			t.Errorf("thpMode(%q) = %q, want %q", tt.enabled, got, tt.want)
		}
	}
}

func TestWantHugePages(t *testing.T) {
	for _, tt := range []struct {
		mode, godebug string
		want          bool
	}{
		{"madvise", "", true},
		{"madvise", "gctrace=1,madvdontneed=1", true},
		{"madvise", "disablethp=0", true},
		{"madvise", "gctrace=1, disablethp=1", false},
		{"always", "", false},
		{"never", "", false},
		{"", "", false},
	} {
		if got := wantHugePages(tt.mode, tt.godebug); got != tt.want {
			t.Errorf("wantHugePages(%q, %q) = %v, want %v", tt.mode, tt.godebug, got, tt.want)
		}
	}
}

// TestSmallState: huge pages for a run that resumes a state no larger
// than the soft limit, only under a limit, never for a new state.
func TestSmallState(t *testing.T) {
	for _, tt := range []struct {
		state, limit int64
		want         bool
	}{
		{12 << 20, 64 << 20, true},
		{64 << 20, 64 << 20, true},
		{64<<20 + 1, 64 << 20, false},
		{300 << 20, 64 << 20, false},
		{0, 64 << 20, false},
		{12 << 20, math.MaxInt64, false},
	} {
		if got := smallState(tt.state, tt.limit); got != tt.want {
			t.Errorf("smallState(%d, %d) = %v, want %v", tt.state, tt.limit, got, tt.want)
		}
	}
}

func TestNearLimit(t *testing.T) {
	for _, tt := range []struct {
		goal  uint64
		limit int64
		want  bool
	}{
		{48 << 20, 64 << 20, true},
		{48<<20 - 1, 64 << 20, false},
		{10 << 20, 64 << 20, false},
		{100 << 20, 64 << 20, true},
		{1 << 30, 0, false},
	} {
		if got := nearLimit(tt.goal, tt.limit); got != tt.want {
			t.Errorf("nearLimit(%d, %d) = %v, want %v", tt.goal, tt.limit, got, tt.want)
		}
	}
}

// TestDropNearLimit: the undo runs after a collection whose goal is near
// the soft memory limit, and not before.
func TestDropNearLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	undone := make(chan struct{}, 1)
	dropNearLimit(func() { undone <- struct{}{} })
	for range 5 {
		runtime.GC()
	}
	select {
	case <-undone:
		t.Fatal("undone far below the limit")
	default:
	}
	// 4 MiB kept alive under a limit of 4 MiB: the goal is past three
	// quarters of it.
	debug.SetMemoryLimit(4 << 20)
	keep := make([]byte, 4<<20)
	deadline := time.After(time.Minute)
	for {
		runtime.GC()
		select {
		case <-undone:
			runtime.KeepAlive(keep)
			return
		case <-deadline:
			t.Fatal("not undone a minute after the goal came near the limit")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
