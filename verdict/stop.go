package verdict

import "fmt"

// Stop says why a run ended.
type Stop string

// The seven stops, named as in the user documentation.
const (
	// StopQueueEmpty: no URL is left to fetch, including the retries the run
	// scheduled and waited for. A retry pass that trips a stop rule also
	// reports StopQueueEmpty, because the first pass emptied the queue.
	StopQueueEmpty Stop = "queue_empty"
	// StopMaxRequests: the request budget ran out.
	StopMaxRequests Stop = "max_requests"
	// StopConsecutiveFailures: max_consecutive_failures requests in a row
	// failed after their retries.
	StopConsecutiveFailures Stop = "consecutive_failures"
	// StopErrorRate: the share of requests that failed after their retries
	// passed max_error_rate.
	StopErrorRate Stop = "error_rate"
	// StopBlocked: a middleware or a [block] rule set the stop reason.
	StopBlocked Stop = "blocked"
	// StopInterrupted: a signal or the deadline stopped the run.
	StopInterrupted Stop = "interrupted"
	// StopError: setup or the crawl raised an error.
	StopError Stop = "error"
)

// Stops lists every Stop in the documentation's order.
var Stops = []Stop{
	StopQueueEmpty, StopMaxRequests, StopConsecutiveFailures, StopErrorRate,
	StopBlocked, StopInterrupted, StopError,
}

// Valid reports whether s is one of the seven stops.
func (s Stop) Valid() bool {
	for _, known := range Stops {
		if s == known {
			return true
		}
	}
	return false
}

// IsStopRule reports whether s is one of the two stop rules that end a run a
// site is failing.
func (s Stop) IsStopRule() bool {
	return s == StopConsecutiveFailures || s == StopErrorRate
}

// MarshalText encodes s, refusing values outside the seven stops.
func (s Stop) MarshalText() ([]byte, error) {
	if !s.Valid() {
		return nil, fmt.Errorf("unknown stop %q", string(s))
	}
	return []byte(s), nil
}

// UnmarshalText decodes s, refusing values outside the seven stops.
func (s *Stop) UnmarshalText(b []byte) error {
	v := Stop(b)
	if !v.Valid() {
		return fmt.Errorf("unknown stop %q", string(b))
	}
	*s = v
	return nil
}
