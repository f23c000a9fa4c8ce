package pressure

import (
	"testing"
	"time"
)

func TestSomeKeepsTheAveragesOfTheSomeLine(t *testing.T) {
	const psi = "some avg10=63.26 avg60=65.68 avg300=67.28 total=21718104317\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	if got, want := Some(psi), "some avg10=63.26 avg60=65.68 avg300=67.28"; got != want {
		t.Errorf("Some = %q, want %q", got, want)
	}
	if got := Some("full avg10=0.00 total=0\n"); got != "unknown (no some line)" {
		t.Errorf("Some without a some line = %q", got)
	}
}

// TestFaultCostIsMeasured: touching fresh pages takes some time, and less
// than a millisecond a page on any machine a benchmark means anything on.
func TestFaultCostIsMeasured(t *testing.T) {
	d, err := FaultCost()
	if err != nil {
		t.Skip(err)
	}
	if d <= 0 || d > time.Millisecond {
		t.Errorf("FaultCost = %v, want between 0 and 1ms", d)
	}
}
