package crawl

import (
	"context"
	"time"
)

// Clock is the engine's time: tests make backoffs, retry-pass waits and
// pauses take milliseconds by configuring short durations or a fake Sleep.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends, whichever is first, and returns
	// ctx's error in the second case.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx ends.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
