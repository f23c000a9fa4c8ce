package verdict

import (
	"strings"
	"testing"
)

func record(r *StopRules, c Class, n int) (Trip, bool) {
	for i := 0; i < n; i++ {
		if trip, ok := r.Record(c); ok {
			return trip, true
		}
	}
	return Trip{}, false
}

func TestErrorRateNoVerdictBelowMinSamples(t *testing.T) {
	r := NewStopRules(Thresholds{MaxErrorRate: 0.35, ErrorWindow: 200, ErrorMinSamples: 50})
	// 49 failures in a row: 100 % of the window, but fewer than 50 samples.
	if trip, ok := record(r, ClassFailure, 49); ok {
		t.Fatalf("tripped below 50 samples: %+v", trip)
	}
	trip, ok := r.Record(ClassFailure)
	if !ok || trip.Stop != StopErrorRate || trip.Of != 50 || trip.Failed != 50 {
		t.Fatalf("the 50th sample must trip: %+v %v", trip, ok)
	}
}

func TestErrorRateTripsAtThresholdOfLast200(t *testing.T) {
	r := NewStopRules(Thresholds{MaxErrorRate: 0.35, ErrorWindow: 200, ErrorMinSamples: 50})
	// 200 ok results fill the window; then failures slide in one by one.
	record(r, ClassOK, 200)
	for i := 1; i <= 69; i++ {
		if trip, ok := r.Record(ClassFailure); ok {
			t.Fatalf("tripped at %d/200 failures: %+v", i, trip)
		}
	}
	trip, ok := r.Record(ClassFailure)
	if !ok {
		t.Fatal("70 of the last 200 (exactly 35%) must trip")
	}
	if trip.Failed != 70 || trip.Of != 200 {
		t.Fatalf("trip counts = %d/%d, want 70/200", trip.Failed, trip.Of)
	}
	if want := "35% of the last 200 requests failed (threshold 35%)"; trip.Detail != want {
		t.Fatalf("detail = %q, want %q", trip.Detail, want)
	}
}

func TestErrorRateIsAShareNotAnAbsoluteCount(t *testing.T) {
	r := NewStopRules(Thresholds{MaxErrorRate: 0.35, ErrorWindow: 200, ErrorMinSamples: 50})
	// 1,000 failures spread over 10,000 results (10 %) never trip:
	// a hundred errors in half a million requests are ordinary days.
	for i := 0; i < 10000; i++ {
		c := ClassOK
		if i%10 == 0 {
			c = ClassFailure
		}
		if trip, ok := r.Record(c); ok {
			t.Fatalf("tripped at result %d on a 10%% failure share: %+v", i, trip)
		}
	}
}

func TestErrorWindowSlides(t *testing.T) {
	w := NewErrorWindow(4)
	for _, f := range []bool{true, true, false, false} {
		w.Add(f)
	}
	if failed, of := w.Counts(); failed != 2 || of != 4 {
		t.Fatalf("counts = %d/%d, want 2/4", failed, of)
	}
	w.Add(false) // evicts the first failure
	w.Add(false) // evicts the second
	if failed, of := w.Counts(); failed != 0 || of != 4 {
		t.Fatalf("after sliding = %d/%d, want 0/4", failed, of)
	}
	w.Reset()
	if failed, of := w.Counts(); failed != 0 || of != 0 {
		t.Fatalf("after reset = %d/%d", failed, of)
	}
	if w.Exceeds(0.35, 0) {
		t.Fatal("an empty window never exceeds")
	}
}

func TestNeutralResultsNeitherCountNorReset(t *testing.T) {
	r := NewStopRules(Thresholds{MaxConsecutiveFailures: 3, MaxErrorRate: 0.35, ErrorWindow: 200, ErrorMinSamples: 50})
	r.Record(ClassFailure)
	r.Record(ClassFailure)
	// 404s in the middle of failures do not count and do not reset.
	if _, ok := record(r, ClassNeutral, 100); ok {
		t.Fatal("neutral results tripped a rule")
	}
	if r.Consecutive() != 2 {
		t.Fatalf("consecutive = %d after neutrals, want 2", r.Consecutive())
	}
	if _, of := r.Window(); of != 2 {
		t.Fatalf("window holds %d results, want 2 (neutrals excluded)", of)
	}
	trip, ok := r.Record(ClassFailure)
	if !ok || trip.Stop != StopConsecutiveFailures || trip.Failed != 3 {
		t.Fatalf("third failure must trip consecutive_failures: %+v %v", trip, ok)
	}
	if want := "3 requests in a row failed after retries"; trip.Detail != want {
		t.Fatalf("detail = %q, want %q", trip.Detail, want)
	}
}

func TestOKResetsConsecutive(t *testing.T) {
	r := NewStopRules(Thresholds{MaxConsecutiveFailures: 3})
	for i := 0; i < 10; i++ {
		r.Record(ClassFailure)
		r.Record(ClassFailure)
		if _, ok := r.Record(ClassOK); ok {
			t.Fatal("ok tripped")
		}
	}
	if r.Consecutive() != 0 {
		t.Fatalf("consecutive = %d after ok", r.Consecutive())
	}
}

func TestDisabledRules(t *testing.T) {
	r := NewStopRules(Thresholds{ErrorWindow: 10, ErrorMinSamples: 1})
	if trip, ok := record(r, ClassFailure, 1000); ok {
		t.Fatalf("disabled rules tripped: %+v", trip)
	}
}

func TestDetails(t *testing.T) {
	if got := MaxRequestsDetail(20); got != "Reached max requests limit (20)" {
		t.Fatalf("max requests detail = %q", got)
	}
	if got := ErrorRateDetail(82, 200, 0.35); got != "41% of the last 200 requests failed (threshold 35%)" {
		t.Fatalf("error rate detail = %q", got)
	}
	if got := ErrorRateDetail(71, 200, 0.35); !strings.HasPrefix(got, "35.5% ") {
		t.Fatalf("a share just above the threshold must not round down to it: %q", got)
	}
}

func TestMarkupDriftTripsErrorRate(t *testing.T) {
	th := Thresholds{ErrorWindow: 200, ErrorMinSamples: 50, MaxUnusableRate: 0.5}
	r := NewStopRules(th)
	// A healthy site with some unusable items never trips.
	for range 100 {
		if _, ok := r.RecordItems(3, 1); ok {
			t.Fatal("a quarter of unusable items tripped the rule")
		}
	}
	// The redesign: from now on every item is unusable.
	var trip Trip
	var ok bool
	n := 0
	for !ok {
		trip, ok = r.RecordItems(0, 1)
		n++
	}
	// It trips on the first item that brings the share to the threshold.
	if trip.Stop != StopErrorRate || !trip.Markup || trip.Of != 200 || trip.Failed != 100 || n >= 100 {
		t.Fatalf("trip %+v after %d unusable items", trip, n)
	}
	if want := "50% of the last 200 item pages were unusable (threshold 50%): the markup may have changed"; trip.Detail != want {
		t.Fatalf("detail %q, want %q", trip.Detail, want)
	}
	// Judged only from error_min_samples on; 0 disables the rule.
	r = NewStopRules(th)
	for i := range 49 {
		if _, ok := r.RecordItems(0, 1); ok {
			t.Fatalf("tripped on %d samples", i+1)
		}
	}
	if _, ok := r.RecordItems(0, 1); !ok {
		t.Fatal("did not trip on the 50th unusable item")
	}
	th.MaxUnusableRate = 0
	r = NewStopRules(th)
	for range 300 {
		if _, ok := r.RecordItems(0, 1); ok {
			t.Fatal("a disabled rule tripped")
		}
	}
}
