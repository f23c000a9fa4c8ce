package verdict

import (
	"testing"
	"time"
)

func TestProbeAtTheThresholdKeepsTheBreakerOpen(t *testing.T) {
	p := BreakerPolicy{Pause: time.Minute, ProbeRequests: 20, MaxProbes: 3, MaxErrorRate: 0.35}
	var b Breaker
	now := time.Unix(0, 0)
	b.Tripped(now, 100, Trip{Stop: StopErrorRate, Failed: 70, Of: 200})
	// 7 of 20 is exactly 35 %: the probe fails.
	if b.Probed(now, 120, 7, 20, p) {
		t.Fatal("a probe at exactly the threshold must keep the breaker open")
	}
	// 6 of 20 (30 %) is below: it passes.
	if !b.Probed(now, 140, 6, 20, p) {
		t.Fatal("a probe below the threshold must close the breaker")
	}
	// Neutral results are excluded: 0 counted passes.
	if !b.Probed(now, 160, 0, 0, p) {
		t.Fatal("a probe of only neutral results must pass")
	}
	if b.Trips != 1 || b.Probes != 3 || len(b.Events) != 4 {
		t.Fatalf("breaker = %+v", b)
	}
	if e := b.Events[1]; e.Kind != EventProbe || e.Failed != 7 || e.Of != 20 || e.Request != 120 {
		t.Fatalf("probe event = %+v", e)
	}
}

func TestThreeFailedProbesInARowGiveUp(t *testing.T) {
	p := BreakerPolicy{Pause: time.Minute, ProbeRequests: 20, MaxProbes: 3, MaxErrorRate: 0.35}
	var b Breaker
	now := time.Unix(0, 0)
	b.Tripped(now, 50, Trip{Stop: StopConsecutiveFailures, Failed: 25, Of: 25})
	for i := 1; i <= 3; i++ {
		if b.GivesUp(p) {
			t.Fatalf("gave up after %d failed probes", i-1)
		}
		b.Probed(now, 50+20*i, 20, 20, p)
	}
	if !b.GivesUp(p) || b.FailedProbes() != 3 {
		t.Fatalf("three failed probes in a row must give up: %+v", b)
	}
	// A passing probe resets the count; so does a new trip.
	b.Probed(now, 200, 0, 20, p)
	if b.FailedProbes() != 0 {
		t.Fatal("a passing probe resets the failed probes")
	}
}

func TestBreakerPolicyEnabled(t *testing.T) {
	if (BreakerPolicy{}).Enabled() || !(BreakerPolicy{Pause: time.Second}).Enabled() {
		t.Fatal("pause = 0 disables pause-and-probe")
	}
}
