// Package testhook lets tests stop a run at a chosen step of the publish
// protocol, to prove a crash there loses and duplicates nothing. In
// production PublishStep is nil and Reached does nothing.
package testhook

// PublishStep, when set, is called as a publish completes each step:
// "staging" (the staging folder exists, no file is written yet), "staged"
// (files written and synced), "recorded" (the publish is in
// state), "renamed" (inside the promote, right after the rename, before
// the folders are synced), "promoted" (the run folder is visible),
// "completed" (_SUCCESS is written; the state commit is next). An error abandons the publish there,
// leaving files and state as a crash would.
var PublishStep func(step string) error

// Reached reports that a publish completed step.
func Reached(step string) error {
	if PublishStep == nil {
		return nil
	}
	return PublishStep(step)
}
