package cli

import (
	"fmt"

	"github.com/databrew/databrew-stage/verdict"
)

// Fail-when policies.
const (
	FailWhenAny   = "any"
	FailWhenAll   = "all"
	FailWhenNever = "never"
)

// exitCode turns the run reports into the process exit code: 1 when the
// fail-when policy says the invocation failed; otherwise unproductive
// (when positive) if every run succeeded and none was productive;
// otherwise 0. A run whose export failed with an error (export.failed)
// counts as failed whatever its outcome: a scheduler must not go on as if
// its export happened.
func exitCode(reports []verdict.RunReport, failWhen string, unproductive int) int {
	failed, succeeded, productive := 0, 0, 0
	for _, r := range reports {
		switch {
		case r.FailsDownstream():
			failed++
		case r.Outcome == verdict.OutcomeSuccess:
			succeeded++
		}
		if r.Productive {
			productive++
		}
	}
	switch {
	case failWhen == FailWhenAny && failed > 0,
		failWhen == FailWhenAll && failed > 0 && failed == len(reports):
		return ExitFailed
	case unproductive > 0 && len(reports) > 0 && succeeded == len(reports) && productive == 0:
		return unproductive
	}
	return ExitOK
}

func checkFailWhen(s string) error {
	switch s {
	case FailWhenAny, FailWhenAll, FailWhenNever:
		return nil
	}
	return fmt.Errorf("--fail-when must be any, all or never, not %q", s)
}
