package verdict

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// SchemaVersion is the version of the RunReport JSON shape; it changes only
// when a field is renamed, removed or changes meaning.
const SchemaVersion = 1

// RunReport is the verdict of one run and everything around it. The same
// value is returned by the Go API, written to .last_run.json, printed by
// `run --json` and read by `report`.
type RunReport struct {
	Config        string    `json:"config"`
	RunID         string    `json:"run_id"`
	SchemaVersion int       `json:"schema_version"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at"`
	// Crawl is what the crawl came to, its stop first; its fields are the
	// report's, in JSON too.
	Crawl
	// Outcome says how the run went; Rule is the outcome rule (1-4) that
	// set it, 0 for a run that never started.
	Outcome    Outcome `json:"outcome"`
	Rule       Rule    `json:"outcome_rule"`
	Productive bool    `json:"productive"`
	// Started is false for a config that never started: "Not started" or
	// a locked storage path. Such a report is never written to storage.
	Started        bool   `json:"started"`
	EmptyRunStreak int    `json:"empty_run_streak"`
	Export         Export `json:"export"`
	// Shard names the shard a run was, such as "2-of-4", in the verdict of
	// one shard of a logical run; empty for a run of the whole config.
	Shard string `json:"shard,omitempty"`
	// Shards holds each shard's verdict, by index, in the verdict of a
	// logical run a commit combined (see Combine).
	Shards []RunReport `json:"shards,omitempty"`
}

// Crawl is what a run's crawl came to: the part of the verdict the crawl
// engine fills in, which RunReport embeds.
type Crawl struct {
	// Stop says why the run ended; Detail adds the specifics.
	Stop      Stop          `json:"stop"`
	Detail    string        `json:"detail"`
	Requests  RequestCounts `json:"requests"`
	Items     ItemCounts    `json:"items"`
	Traversal Traversal     `json:"traversal"`
	// CoverageGaps counts URLs whose result was a failure, or a page
	// extraction could not use; Gaps lists the first of them.
	CoverageGaps int     `json:"coverage_gaps"`
	Gaps         []Gap   `json:"gaps"`
	Breaker      Breaker `json:"breaker"`
	// Fields counts, for every declared field by name, the items the run
	// extracted (item pages, cards and rows, usable or not; not a page
	// answered 304 or skipped) in which it had a type error, or found
	// nothing.
	Fields map[string]FieldCounts `json:"fields"`
	// Render is what the browser did, in a run that rendered pages; nil
	// (left out) in a run without [render].
	Render *Render `json:"render,omitempty"`
}

// FieldCounts counts what became of one field over the items a run
// extracted.
type FieldCounts struct {
	// TypeErrors counts items in which the field found a value its type
	// does not take: the field was NULL there.
	TypeErrors int `json:"type_errors"`
	// FoundNothing counts items in which it found nothing.
	FoundNothing int `json:"found_nothing"`
}

// RequestCounts counts HTTP exchanges and URL results.
type RequestCounts struct {
	// Total is every HTTP exchange for a page, retries included; robots.txt
	// fetches are not counted.
	Total int `json:"total"`
	// OK, Neutral and Failed count URL results after their retries.
	OK      int `json:"ok"`
	Neutral int `json:"neutral"`
	Failed  int `json:"failed"`
	// Retried counts exchanges that were retries of an earlier one.
	Retried int `json:"retried"`
	// RobotsExcluded counts URLs robots.txt kept the run from fetching.
	RobotsExcluded int `json:"robots_excluded"`
	// NotModified counts conditional requests the site answered with 304
	// Not Modified: ok results that cost no body and no parse.
	NotModified int `json:"not_modified"`
	// Subresources counts the requests rendered pages made besides their
	// documents (scripts, API calls) that left the browser: they are not
	// requests of the budget, the stop rules or Total.
	Subresources int `json:"subresources"`
}

// ItemCounts counts items stored by the run, by change.
type ItemCounts struct {
	New       int `json:"new"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
	Removed   int `json:"removed"`
	// Skipped counts items whose pages a [revisit] policy did not fetch
	// because they were not due: seen on their listings, not read.
	Skipped int `json:"skipped"`
	// DuplicateKeys counts items the run did not store because another
	// page holds their key: one page keeps a key, whatever the order pages
	// are fetched in.
	DuplicateKeys int `json:"duplicate_keys"`
	// TypeErrors counts the type errors of every field (see Fields).
	TypeErrors int `json:"type_errors"`
}

// Traversal describes the crawl from the start URLs until the queue is
// empty, which may span several runs.
type Traversal struct {
	// ID numbers traversals of one storage path from 1.
	ID uint64 `json:"id"`
	// Started is true when this run began the traversal.
	Started bool `json:"started"`
	// Completed is true when this run emptied the queue.
	Completed bool `json:"completed"`
	// Queued is how many URLs wait in the queue for the next run.
	Queued int `json:"queued"`
	// Gaps counts coverage gaps over every run of the traversal so far,
	// this one included: removed items are only judged after a traversal
	// that completed without any.
	Gaps int `json:"gaps"`
}

// Gap is one coverage gap: a URL and why it is one.
type Gap struct {
	URL    string `json:"url"`
	Reason string `json:"reason"`
}

// MaxListedGaps bounds RunReport.Gaps; CoverageGaps holds the full count.
const MaxListedGaps = 20

// Breaker tells the story of the run's pauses and probes, and keeps the
// count of failed probes in a row that pause-and-probe decides on.
type Breaker struct {
	Trips  int            `json:"trips"`
	Probes int            `json:"probes"`
	Events []BreakerEvent `json:"events"`

	failedProbes int
}

// BreakerEvent is one trip, pause, probe, resume or give-up.
type BreakerEvent struct {
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Request int       `json:"request"`
	Failed  int       `json:"failed"`
	Of      int       `json:"of"`
}

// Export says whether the run published data, and if not, why.
type Export struct {
	Published bool `json:"published"`
	// Failed is true when the run was to publish, or had to, and an error
	// kept it from doing so: the export or the state could not be written.
	// It is false when nothing was published by policy: a failed run
	// withheld, a partial one under publish_when = "success", nothing new.
	Failed bool `json:"failed"`
	// Reason says why nothing was published; for a failed export, the
	// error.
	Reason string   `json:"reason"`
	Path   string   `json:"path"`
	Files  []string `json:"files"`
	Rows   int      `json:"rows"`
	// Staged is true in a shard's verdict when its files wait, uploaded
	// but not visible, for the commit of the logical run (Path, Files and
	// Rows describe them); Published stays false until that commit.
	Staged bool `json:"staged,omitempty"`
	// Table names the table, when the output is one (an Iceberg table),
	// and the snapshot the run committed into it; nil (left out) for a
	// folder or object-storage output, and for a run that never got as
	// far as its export.
	Table *Table `json:"table,omitempty"`
}

// TableFormatIceberg is Table.Format of an Apache Iceberg table.
const TableFormatIceberg = "iceberg"

// Table is the table a run's output is, in the export section of its
// verdict, and the snapshot the run committed into it.
type Table struct {
	// Format is the table format: TableFormatIceberg.
	Format string `json:"format"`
	// Name is the table's name in its catalog, NAMESPACE.TABLE.
	Name string `json:"name"`
	// Catalog is the catalog's URI without a password.
	Catalog string `json:"catalog"`
	// Location is the table's location as its metadata says (a URL: its
	// data and metadata files are under it); empty when it is not known.
	Location string `json:"location,omitempty"`
	// SnapshotID is the id of the snapshot the run committed (its summary
	// holds the run id); 0, left out, when the run committed none.
	SnapshotID int64 `json:"snapshot_id,omitempty"`
}

// Validate returns an error when the table lacks its format or name, or
// has a negative snapshot id (Iceberg's are not negative).
func (t Table) Validate() error {
	switch {
	case t.Format == "":
		return errors.New("export.table has no format")
	case t.Name == "":
		return errors.New("export.table has no name")
	case t.SnapshotID < 0:
		return fmt.Errorf("export.table has a negative snapshot_id %d", t.SnapshotID)
	}
	return nil
}

// Validate returns an error when the report has no valid stop or outcome,
// as one decoded from JSON that lacks them (or sets them to null) has: the
// decoder refuses unknown values but leaves missing ones empty, and an
// empty stop or outcome cannot be encoded again; or when its export names
// a table that is not valid (see Table.Validate).
func (r RunReport) Validate() error {
	if !r.Stop.Valid() {
		return fmt.Errorf("unknown stop %q", string(r.Stop))
	}
	if !r.Outcome.Valid() {
		return fmt.Errorf("unknown outcome %q", string(r.Outcome))
	}
	if r.Export.Table != nil {
		return r.Export.Table.Validate()
	}
	return nil
}

// Failed reports whether the outcome is failed.
func (r RunReport) Failed() bool { return r.Outcome == OutcomeFailed }

// FailsDownstream reports whether nothing downstream may build on the run:
// its outcome is failed, or an error kept its export from publishing
// (export.failed). Such a run fails the exit code under --fail-when, the
// Dagster verdict check and the OpenLineage run.
func (r RunReport) FailsDownstream() bool { return r.Failed() || r.Export.Failed }

// Summary is the one human line every run prints, such as
// "books: success (queue_empty) · 1062 requests · 12 new · 3 changed · 2 coverage gaps · 4.1s".
func (r RunReport) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", r.Config)
	if r.Shard != "" {
		fmt.Fprintf(&b, " [shard %s of run %s]", r.Shard, r.RunID)
	}
	fmt.Fprintf(&b, ": %s (%s)", r.Outcome, r.Stop)
	if !r.Started {
		fmt.Fprintf(&b, " · %s", r.Detail)
		return b.String()
	}
	fmt.Fprintf(&b, " · %d requests", r.Requests.Total)
	if r.Requests.NotModified > 0 {
		fmt.Fprintf(&b, " (%d not modified)", r.Requests.NotModified)
	}
	fmt.Fprintf(&b, " · %d new · %d changed", r.Items.New, r.Items.Changed)
	if r.Items.Skipped > 0 {
		fmt.Fprintf(&b, " · %d skipped", r.Items.Skipped)
	}
	fmt.Fprintf(&b, " · %d coverage gaps", r.CoverageGaps)
	if r.Items.Removed > 0 {
		fmt.Fprintf(&b, " · %d removed", r.Items.Removed)
	}
	if r.Breaker.Trips > 0 {
		fmt.Fprintf(&b, " · %d trips", r.Breaker.Trips)
	}
	fmt.Fprintf(&b, " · %.1fs", r.FinishedAt.Sub(r.StartedAt).Seconds())
	if r.Export.Staged {
		fmt.Fprintf(&b, " · %d rows staged for the commit", r.Export.Rows)
	}
	if r.Detail != "" {
		fmt.Fprintf(&b, " · %s", r.Detail)
	}
	return b.String()
}

// NotStarted is the report of a config that a deadline or a signal stopped
// before it started.
func NotStarted(config string, at time.Time) RunReport {
	r := unstarted(config, at, StopInterrupted, DetailNotStarted)
	r.Export.Reason = DetailNotStarted
	return r
}

// Locked is the report of a config whose storage path another process
// holds; detail names the path.
func Locked(config string, at time.Time, detail string) RunReport {
	r := unstarted(config, at, StopError, detail)
	r.Export.Reason = "storage is locked"
	return r
}

// OutputUnusable is the verdict of a run whose output could not be used
// (a missing bucket, no credentials, access denied, an unreachable store):
// nothing was crawled and nothing written.
func OutputUnusable(config string, at time.Time, detail string) RunReport {
	r := unstarted(config, at, StopError, detail)
	r.Export.Reason = "the output could not be used: nothing was crawled or written"
	return r
}

func unstarted(config string, at time.Time, stop Stop, detail string) RunReport {
	return RunReport{
		Config: config, SchemaVersion: SchemaVersion,
		StartedAt: at, FinishedAt: at,
		Crawl:   Crawl{Stop: stop, Detail: detail, Gaps: []Gap{}, Breaker: Breaker{Events: []BreakerEvent{}}, Fields: map[string]FieldCounts{}},
		Outcome: OutcomeFailed,
		Export:  Export{Files: []string{}},
	}
}

// NextEmptyRunStreak returns the streak after a run: 0 for a productive
// run, one more than before otherwise.
func NextEmptyRunStreak(previous int, productive bool) int {
	if productive {
		return 0
	}
	return previous + 1
}
