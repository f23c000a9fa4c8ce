package pressure

import (
	"strings"
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

// TestHugeFaultCostIsMeasured: touching memory advised for huge pages
// takes some time, less than a millisecond a 4 KiB page, and FaultLine
// says what it took.
func TestHugeFaultCostIsMeasured(t *testing.T) {
	d, err := HugeFaultCost()
	if err != nil {
		t.Skip(err)
	}
	if pages := time.Duration(hugeBytes / 4096); d <= 0 || d > pages*time.Millisecond {
		t.Errorf("HugeFaultCost = %v, want between 0 and %v", d, pages*time.Millisecond)
	}
	if line := FaultLine(); !strings.Contains(line, "MiB under MADV_HUGEPAGE") {
		t.Errorf("FaultLine = %q, want the huge page cost in it", line)
	}
}
