package stage

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// runIDLayout is a run id's time: UTC to the millisecond, so ids sort by
// start time as text.
const runIDLayout = "20060102T150405.000Z"

// newRunID returns an id made from a claimed run time (state.ClaimRunTime:
// later than every earlier run's of the storage path) and a random suffix
// that tells runs of different storage paths apart:
// 20261130T002305.123Z-3f9a.
func newRunID(at time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return at.UTC().Format(runIDLayout) + "-" + hex.EncodeToString(b[:])
}
