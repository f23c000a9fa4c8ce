//go:build !linux

package pressure

import (
	"errors"
	"time"
)

// HugeFaultCost is not measured on this system: transparent huge pages
// are Linux's.
func HugeFaultCost() (time.Duration, error) {
	return 0, errors.New("not measured on this system")
}
