package crawl

import (
	"time"

	"github.com/databrew/databrew-stage/verdict"
)

// breaker is pause-and-probe: it feeds each result to the stop rules while
// the run goes freely, and when a rule trips it holds the run, lets a
// bounded probe through after the pause, and then closes (the run goes on
// from where it stopped) or, after max_probes failed probes in a row, gives
// up. It keeps the failures of the current outage, which go back to the
// queue rather than being charged as coverage gaps, and the story the
// verdict tells. It knows nothing of goroutines or contexts: the run acts
// on what it says.
type breaker struct {
	policy verdict.BreakerPolicy
	// unusableRate is max_unusable_rate: a probe after a markup trip is
	// judged against it.
	unusableRate float64
	rules        *verdict.StopRules
	window       int // error_window: how far back a failure belongs to the outage

	phase    phase
	lastTrip verdict.Trip
	counted  int             // results counted by the stop rules since they were reset
	recent   []recentFailure // failures among the last window counted results
	// A probe: URLs it may still dispatch, and its failed and counted
	// results (neutral ones excluded).
	probeLeft, probeFailed, probeOf int

	story verdict.Breaker
}

// phase is where pause-and-probe stands.
type phase uint8

const (
	phaseRunning phase = iota // dispatching freely
	phasePaused               // a stop rule tripped: waiting out the pause
	phaseProbing              // dispatching a bounded probe
)

// recentFailure is a failed URL and the count of results when it failed.
type recentFailure struct {
	at int
	q  Queued
}

func newBreaker(t verdict.Thresholds, p verdict.BreakerPolicy) *breaker {
	// A probe fails at the error_rate threshold; with that rule off
	// (max_error_rate = 0), only when all it counted failed.
	p.MaxErrorRate = t.MaxErrorRate
	if p.MaxErrorRate <= 0 {
		p.MaxErrorRate = 1
	}
	return &breaker{policy: p, unusableRate: t.MaxUnusableRate, rules: verdict.NewStopRules(t), window: max(t.ErrorWindow, 1)}
}

// enabled reports whether a trip pauses and probes rather than stopping.
func (b *breaker) enabled() bool { return b.policy.Enabled() }

// mayDispatch reports whether the run may send a URL now: freely while
// running, up to probe_requests while probing, none while paused.
func (b *breaker) mayDispatch() bool {
	return b.phase == phaseRunning || b.phase == phaseProbing && b.probeLeft > 0
}

// dispatched notes a URL sent, and reports whether it is part of a probe
// (one request, no retries).
func (b *breaker) dispatched() (probe bool) {
	if b.phase != phaseProbing {
		return false
	}
	b.probeLeft--
	return true
}

// record feeds one finished URL's result to the stop rules while running,
// to the probe while probing; a failure that lands while paused belongs to
// the outage. It returns the trip a stop rule fired, if any.
func (b *breaker) record(class verdict.Class, q Queued) (verdict.Trip, bool) {
	failed := class == verdict.ClassFailure
	switch b.phase {
	case phasePaused:
		if failed {
			b.recent = append(b.recent, recentFailure{q: q})
		}
	case phaseProbing:
		if class == verdict.ClassNeutral {
			return verdict.Trip{}, false
		}
		b.probeOf++
		if failed {
			b.probeFailed++
			b.recent = append(b.recent, recentFailure{q: q})
		}
	default:
		if class == verdict.ClassNeutral {
			return verdict.Trip{}, false
		}
		b.counted++
		if failed {
			b.recent = append(b.recent, recentFailure{at: b.counted, q: q})
		}
		for len(b.recent) > 0 && b.counted-b.recent[0].at >= b.window {
			b.recent = b.recent[1:]
		}
		return b.rules.Record(class)
	}
	return verdict.Trip{}, false
}

// recordItems feeds the items a page held to the markup drift rule while
// running. While probing after a trip of that rule, an unusable item is a
// failed probe result: the site answers, so only its items tell whether
// the markup came back.
func (b *breaker) recordItems(usable, unusable int) (verdict.Trip, bool) {
	switch b.phase {
	case phaseRunning:
		return b.rules.RecordItems(usable, unusable)
	case phaseProbing:
		if b.lastTrip.Markup {
			b.probeOf += unusable
			b.probeFailed += unusable
		}
	}
	return verdict.Trip{}, false
}

// trip opens the breaker: the run pauses.
func (b *breaker) trip(now time.Time, request int, t verdict.Trip) {
	b.lastTrip = t
	b.story.Tripped(now, request, t)
	b.phase = phasePaused
}

// outage hands over the URLs that failed in the current outage, in the
// order they failed: they go back to the queue, not to the coverage gaps.
func (b *breaker) outage() []Queued {
	qs := make([]Queued, len(b.recent))
	for i, f := range b.recent {
		qs[i] = f.q
	}
	b.recent = b.recent[:0]
	return qs
}

// pausing records the start of a pause.
func (b *breaker) pausing(now time.Time, request int) { b.story.Paused(now, request) }

// probe starts a probe once the pause is over.
func (b *breaker) probe() {
	b.phase = phaseProbing
	b.probeLeft, b.probeFailed, b.probeOf = max(b.policy.ProbeRequests, 1), 0, 0
}

// probeOver reports whether the probe sent all it may.
func (b *breaker) probeOver() bool { return b.phase == phaseProbing && b.probeLeft == 0 }

// verdictOnProbe judges a finished probe. When its failure share is below
// the threshold the breaker closes: the stop rules start afresh and the run
// goes on (resumed). Otherwise the run pauses again, or, after max_probes
// failed probes in a row, gives up on the rule that tripped (stop set).
func (b *breaker) verdictOnProbe(now time.Time, request int) (resumed bool, stop verdict.Trip, giveUp bool) {
	policy := b.policy
	if b.lastTrip.Markup {
		policy.MaxErrorRate = b.unusableRate
	}
	if b.story.Probed(now, request, b.probeFailed, b.probeOf, policy) {
		b.rules.Reset()
		b.counted, b.recent = 0, b.recent[:0]
		b.phase = phaseRunning
		b.story.Resumed(now, request)
		return true, verdict.Trip{}, false
	}
	if b.story.GivesUp(b.policy) {
		b.story.GaveUp(now, request)
		return false, b.lastTrip, true
	}
	b.phase = phasePaused
	return false, verdict.Trip{}, false
}
