package cli

import (
	"fmt"
	"time"
)

// parseDeadline reads --deadline: a duration from now ("45m") or an RFC 3339
// time ("2026-11-30T06:00:00Z").
func parseDeadline(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("--deadline %q must be positive", s)
		}
		return now.Add(d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--deadline %q is neither a duration (45m) nor an RFC 3339 time (2026-11-30T06:00:00Z)", s)
}
