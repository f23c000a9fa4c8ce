// Package verdict holds the pure domain of a run's ending: the Stop (why a
// run ended), the Outcome (how it went), the rules that decide the outcome,
// the stop rules that end a run a site is failing (consecutive failures and
// the error rate over a sliding window), and the RunReport that every
// consumer reads — the exit code, .last_run.json, `report`, and the Go API.
//
// The package does no I/O: its rules are plain functions over plain values,
// so the user documentation's sentences are table tests.
package verdict
