//go:build !unix

package sink_test

import "time"

// cpuTime is unknown here: zero.
func cpuTime() time.Duration { return 0 }
