package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/verdict"
)

// rep builds a report from a short code: "s" success, "p" partial, "f"
// failed, with a trailing "+" for a productive run and a trailing "!" for
// a run whose export failed with an error.
func rep(code string) verdict.RunReport {
	r := verdict.RunReport{Productive: strings.Contains(code, "+")}
	r.Export.Failed = strings.HasSuffix(code, "!")
	switch strings.TrimRight(code, "+!") {
	case "s":
		r.Outcome = verdict.OutcomeSuccess
	case "p":
		r.Outcome = verdict.OutcomePartial
	case "f":
		r.Outcome = verdict.OutcomeFailed
	default:
		panic("bad report code " + code)
	}
	return r
}

func reps(codes string) []verdict.RunReport {
	out := []verdict.RunReport{}
	for _, c := range strings.Fields(codes) {
		out = append(out, rep(c))
	}
	return out
}

// TestExitCode covers SPEC section 4: --fail-when any|all|never decides
// exit 1; --exit-unproductive N applies only when no run failed and none
// was productive; everything else exits 0. SPEC section 9: a run whose
// export failed with an error counts as a failed run.
func TestExitCode(t *testing.T) {
	tests := []struct {
		reports      string
		failWhen     string
		unproductive int
		want         int
	}{
		// any (the default): one failed run is enough.
		{"s+", FailWhenAny, 0, 0},
		{"s", FailWhenAny, 0, 0},
		{"p+", FailWhenAny, 0, 0},
		{"p", FailWhenAny, 0, 0},
		{"f", FailWhenAny, 0, 1},
		{"f+", FailWhenAny, 0, 1},
		{"s+ f", FailWhenAny, 0, 1},
		{"f s+", FailWhenAny, 0, 1},
		{"s+ p+ s", FailWhenAny, 0, 0},
		{"f f", FailWhenAny, 0, 1},

		// all: only when every run failed.
		{"s+ f", FailWhenAll, 0, 0},
		{"f s", FailWhenAll, 0, 0},
		{"f", FailWhenAll, 0, 1},
		{"f f f", FailWhenAll, 0, 1},
		{"s+", FailWhenAll, 0, 0},
		{"p", FailWhenAll, 0, 0},

		// never: failures never exit 1.
		{"f", FailWhenNever, 0, 0},
		{"f f", FailWhenNever, 0, 0},
		{"s+ f", FailWhenNever, 0, 0},

		// --exit-unproductive N: every run succeeded and none was productive.
		{"s", FailWhenAny, 99, 99},
		{"s s", FailWhenAny, 99, 99},
		{"s p", FailWhenAny, 99, 0},
		{"s s+", FailWhenAny, 99, 0},
		{"s+", FailWhenAny, 99, 0},
		{"p+", FailWhenAny, 99, 0},
		{"s", FailWhenAny, 0, 0},
		{"s", FailWhenAny, 3, 3},
		{"s", FailWhenAny, 255, 255},
		// A failed run outranks the unproductive code under any...
		{"f", FailWhenAny, 99, 1},
		{"s f", FailWhenAny, 99, 1},
		// ...and blocks it even where the failure does not exit 1.
		{"s f", FailWhenAll, 99, 0},
		{"f", FailWhenNever, 99, 0},
		{"s f", FailWhenNever, 99, 0},
		{"s", FailWhenNever, 99, 99},
		{"s s", FailWhenAll, 99, 99},
		{"f f", FailWhenAll, 99, 1},
		// A failed run that stored something is still not "unproductive".
		{"s f+", FailWhenNever, 99, 0},

		// A failed export counts as a failed run, whatever the outcome:
		// under any...
		{"p+!", FailWhenAny, 0, 1},
		{"p!", FailWhenAny, 0, 1},
		{"s+ p+!", FailWhenAny, 0, 1},
		{"f+!", FailWhenAny, 0, 1},
		// ...under all, only when every run failed one way or the other...
		{"p+!", FailWhenAll, 0, 1},
		{"f p+!", FailWhenAll, 0, 1},
		{"s+ p+!", FailWhenAll, 0, 0},
		// ...never under never, and it never yields the unproductive code.
		{"p+!", FailWhenNever, 0, 0},
		{"p!", FailWhenNever, 99, 0},
		{"s p!", FailWhenNever, 99, 0},
		{"s p!", FailWhenAll, 99, 0},
		{"s!", FailWhenNever, 99, 0},

		// No reports at all: nothing failed, nothing to skip.
		{"", FailWhenAny, 0, 0},
		{"", FailWhenAll, 0, 0},
		{"", FailWhenAny, 99, 0},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s/[%s]/unproductive=%d", tt.failWhen, tt.reports, tt.unproductive)
		t.Run(name, func(t *testing.T) {
			if got := exitCode(reps(tt.reports), tt.failWhen, tt.unproductive); got != tt.want {
				t.Errorf("exitCode = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestCheckFailWhen(t *testing.T) {
	for _, ok := range []string{"any", "all", "never"} {
		if err := checkFailWhen(ok); err != nil {
			t.Errorf("checkFailWhen(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "ANY", "some", "none"} {
		if err := checkFailWhen(bad); err == nil {
			t.Errorf("checkFailWhen(%q) = nil, want an error", bad)
		}
	}
}
