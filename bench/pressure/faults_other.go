//go:build !unix

package pressure

import (
	"errors"
	"time"
)

// FaultCost is not measured on this system.
func FaultCost() (time.Duration, error) {
	return 0, errors.New("not measured on this system")
}
