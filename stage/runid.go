package stage

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// newRunID returns an id that sorts by start time and does not collide
// between runs started in the same second: 20261130T002305Z-3f9a.
func newRunID(at time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return at.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
