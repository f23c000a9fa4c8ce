package publish

import "github.com/databrew/databrew-stage/state"

// Ledger is what the protocol needs of the state: the pending versions it
// publishes, and the record of each publish (see state.Publication).
// *state.DB is one.
type Ledger interface {
	// ForEachPending calls fn with every pending version up to maxSeq, in
	// order.
	ForEachPending(maxSeq uint64, fn func(state.Version) error) error
	// BeginPublish records a publish, replacing its earlier record.
	BeginPublish(state.Publication) error
	// Publishing lists the publishes begun and neither committed nor
	// aborted.
	Publishing() ([]state.Publication, error)
	// AbortPublish forgets a publish: its versions stay pending.
	AbortPublish(runID string) error
	// CommitPublish marks a publish done: its versions are published.
	CommitPublish(runID string) (int, error)
}

var _ Ledger = (*state.DB)(nil)
