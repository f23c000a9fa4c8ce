package publish

import (
	"context"
	"time"
)

// Output is an export root the protocol publishes into: its Storage, and
// what the protocol needs to know of it beside.
type Output struct {
	// Storage is the root's storage.
	Storage Storage
	// Name is the output as the config gives it (a folder path, a URL).
	// A shard's publication records it, so a later run can settle the
	// attempt there after the config moved to another output.
	Name string
	// ID names the output whatever the spelling of its path or URL;
	// publications record it, and one of another ID is another output's.
	ID string
	// Recorded turns a run folder a release before this protocol recorded
	// (an absolute folder path, a key with the output's prefix) into a key
	// of this output; ok is false when it is not under it. nil: none can
	// be.
	Recorded func(dir string) (key string, ok bool)
	// Sweep removes what killed processes left under the output that no
	// publish owns (on S3, the uploads of preflight probes); exclusive
	// says the caller holds the only state publishing here, so whatever
	// such a process left is debris, however young. nil: nothing to sweep.
	Sweep func(ctx context.Context, now time.Time, exclusive bool) (int, error)
	// Runs counts the committed runs the output holds: every run folder of
	// a local folder; 0 or 1 in object storage, where listing them all
	// would grow with the output's history.
	Runs func(ctx context.Context) (int, error)
	// Tidy removes what releases before this protocol left staged and no
	// publication records (a folder's old staging folders); nil: nothing.
	Tidy func() error
	// Table, when set, is the table the output publishes into: Storage
	// then holds only the control files of the logical runs sharded into
	// it (see stageTable).
	Table Table
	// Close releases the output.
	Close func() error
}

// Where names a key of the output for people: a file path, or a URL
// without its query.
func (o Output) Where(key string) string { return o.Storage.Where(key) }
