//go:build unix

package state

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockFile takes the lock bbolt takes on the state file, exclusive or
// shared, waiting up to timeout; ErrLocked when another process holds it.
// Closing f releases it.
func lockFile(f *os.File, exclusive bool, timeout time.Duration) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return ErrLocked
		}
		time.Sleep(lockRetry)
	}
}
