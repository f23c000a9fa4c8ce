//go:build !unix

package state

import (
	"os"
	"time"
)

// lockFile does nothing on this system: the file is checked without its
// lock, and bbolt's own lock still keeps two runs apart.
func lockFile(*os.File, bool, time.Duration) error { return nil }
