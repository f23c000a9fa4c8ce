package pressure

import "testing"

func TestSomeKeepsTheAveragesOfTheSomeLine(t *testing.T) {
	const psi = "some avg10=63.26 avg60=65.68 avg300=67.28 total=21718104317\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	if got, want := Some(psi), "some avg10=63.26 avg60=65.68 avg300=67.28"; got != want {
		t.Errorf("Some = %q, want %q", got, want)
	}
	if got := Some("full avg10=0.00 total=0\n"); got != "unknown (no some line)" {
		t.Errorf("Some without a some line = %q", got)
	}
}
