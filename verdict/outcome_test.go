package verdict

import "testing"

// The cases are named after the user documentation's sentences they check.
func TestDecide(t *testing.T) {
	cases := []struct {
		name string
		f    Facts
		want Outcome
		rule Rule
	}{
		{"failed when no request succeeded while a failure remains",
			Facts{Stop: StopQueueEmpty, FailuresRemain: true}, OutcomeFailed, 1},
		{"failed when start URLs have all failed for good, by rule 1 whatever stop ended the run",
			Facts{Stop: StopConsecutiveFailures, FailuresRemain: true}, OutcomeFailed, 1},
		{"failed when no request succeeded while a coverage gap remains, even on max_requests",
			Facts{Stop: StopMaxRequests, FailuresRemain: true}, OutcomeFailed, 1},
		{"failed when the run fetched a start URL and no listing page yielded an item or an item link",
			Facts{Stop: StopQueueEmpty, Succeeded: true, FetchedStartURL: true}, OutcomeFailed, 1},
		{"failed on an empty start listing even if the run was productive",
			Facts{Stop: StopQueueEmpty, Succeeded: true, FetchedStartURL: true, Productive: true}, OutcomeFailed, 1},
		{"success when a resumed traversal reaches only an empty last page",
			Facts{Stop: StopQueueEmpty, Succeeded: true, FetchedStartURL: false, ListingYielded: false}, OutcomeSuccess, 2},
		{"success when the run stopped on queue_empty",
			Facts{Stop: StopQueueEmpty, Succeeded: true, FetchedStartURL: true, ListingYielded: true, Productive: true}, OutcomeSuccess, 2},
		{"success when the run stopped on max_requests",
			Facts{Stop: StopMaxRequests, Succeeded: true, FetchedStartURL: true, ListingYielded: true}, OutcomeSuccess, 2},
		{"a run can succeed with coverage gaps when it fetched healthy pages",
			Facts{Stop: StopQueueEmpty, Succeeded: true, FailuresRemain: true, FetchedStartURL: true, ListingYielded: true}, OutcomeSuccess, 2},
		{"success on queue_empty with nothing fetched and nothing failed",
			Facts{Stop: StopQueueEmpty}, OutcomeSuccess, 2},
		{"partial when the run was productive and then a stop rule tripped",
			Facts{Stop: StopErrorRate, Succeeded: true, FailuresRemain: true, FetchedStartURL: true, ListingYielded: true, Productive: true}, OutcomePartial, 3},
		{"partial when interrupted after a request succeeded",
			Facts{Stop: StopInterrupted, Succeeded: true}, OutcomePartial, 3},
		{"partial when blocked after a productive stretch",
			Facts{Stop: StopBlocked, Succeeded: true, Productive: true}, OutcomePartial, 3},
		{"failed otherwise: a stop rule tripped with nothing productive",
			Facts{Stop: StopConsecutiveFailures, Succeeded: true, FailuresRemain: true}, OutcomeFailed, 4},
		{"failed otherwise: blocked after unproductive successes",
			Facts{Stop: StopBlocked, Succeeded: true}, OutcomeFailed, 4},
		{"failed otherwise: interrupted before any request succeeded",
			Facts{Stop: StopInterrupted}, OutcomeFailed, 4},
		{"failed otherwise: an error with nothing stored",
			Facts{Stop: StopError, Succeeded: true}, OutcomeFailed, 4},
		{"partial: an error after a productive stretch",
			Facts{Stop: StopError, Succeeded: true, Productive: true}, OutcomePartial, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, rule := Decide(tc.f)
			if got != tc.want || rule != tc.rule {
				t.Fatalf("Decide(%+v) = %s (rule %d), want %s (rule %d)", tc.f, got, rule, tc.want, tc.rule)
			}
		})
	}
}

func TestStopAndOutcomeText(t *testing.T) {
	for _, s := range Stops {
		b, err := s.MarshalText()
		if err != nil || string(b) != string(s) {
			t.Fatalf("MarshalText(%q) = %q, %v", s, b, err)
		}
		var back Stop
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Fatalf("UnmarshalText(%q) = %q, %v", b, back, err)
		}
	}
	if len(Stops) != 7 {
		t.Fatalf("want the seven stops, have %d", len(Stops))
	}
	if _, err := Stop("done").MarshalText(); err == nil {
		t.Fatal("an unknown stop must not marshal")
	}
	var o Outcome
	if err := o.UnmarshalText([]byte("fine")); err == nil {
		t.Fatal("an unknown outcome must not unmarshal")
	}
	if !StopErrorRate.IsStopRule() || !StopConsecutiveFailures.IsStopRule() || StopBlocked.IsStopRule() {
		t.Fatal("only consecutive_failures and error_rate are stop rules")
	}
}
