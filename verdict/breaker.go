package verdict

import "time"

// BreakerPolicy configures pause-and-probe: what a run does when a stop
// rule trips instead of stopping at once.
type BreakerPolicy struct {
	// Pause is how long the run waits before probing; 0 disables
	// pause-and-probe, and a trip stops the run at once.
	Pause time.Duration
	// ProbeRequests bounds how many requests a probe sends: one per URL,
	// without retries.
	ProbeRequests int
	// MaxProbes is how many failed probes in a row end the run for good.
	MaxProbes int
	// MaxErrorRate is the failure share at or above which a probe fails.
	MaxErrorRate float64
}

// Enabled reports whether a trip pauses and probes rather than stopping.
func (p BreakerPolicy) Enabled() bool { return p.Pause > 0 }

// Breaker event kinds.
const (
	EventTrip   = "trip"
	EventPause  = "pause"
	EventProbe  = "probe"
	EventResume = "resume"
	EventGiveUp = "give_up"
)

// Tripped records a stop rule that fired at the given request ordinal.
func (b *Breaker) Tripped(at time.Time, request int, t Trip) {
	b.Trips++
	b.failedProbes = 0
	b.add(at, EventTrip, request, t.Failed, t.Of)
}

// Paused records the start of a pause.
func (b *Breaker) Paused(at time.Time, request int) { b.add(at, EventPause, request, 0, 0) }

// Probed records a finished probe, in which failed of the counted results
// (neutral ones excluded) were failures, and reports whether it passed:
// its failure share is below the threshold. A probe that counted nothing
// passes.
func (b *Breaker) Probed(at time.Time, request, failed, of int, p BreakerPolicy) bool {
	b.Probes++
	b.add(at, EventProbe, request, failed, of)
	if of > 0 && ShareAtLeast(failed, of, p.MaxErrorRate) {
		b.failedProbes++
		return false
	}
	b.failedProbes = 0
	return true
}

// GivesUp reports whether the probes in a row that failed reached the
// policy's limit.
func (b *Breaker) GivesUp(p BreakerPolicy) bool { return b.failedProbes >= max(p.MaxProbes, 1) }

// FailedProbes is how many probes in a row failed.
func (b *Breaker) FailedProbes() int { return b.failedProbes }

// Resumed records that the breaker closed and the run went on.
func (b *Breaker) Resumed(at time.Time, request int) { b.add(at, EventResume, request, 0, 0) }

// GaveUp records that the run stopped for good.
func (b *Breaker) GaveUp(at time.Time, request int) { b.add(at, EventGiveUp, request, 0, 0) }

func (b *Breaker) add(at time.Time, kind string, request, failed, of int) {
	b.Events = append(b.Events, BreakerEvent{At: at.UTC(), Kind: kind, Request: request, Failed: failed, Of: of})
}
