package lineage

import (
	"fmt"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/verdict"
)

// DefaultNamespace is the job namespace when OPENLINEAGE_NAMESPACE is not
// set.
const DefaultNamespace = "databrew-stage"

// ProgrammingLanguage is the errorMessage facet's programmingLanguage.
const ProgrammingLanguage = "go"

// Tracker builds the events of one stage run: Start before it runs, End
// from its verdict. Every event carries the same run id, job and output
// dataset.
//
// A logical run of shards is one OpenLineage run (see
// NewLogicalRunTracker): each shard's tracker (see Shard) sends a START
// when the shard starts and a RUNNING when it ends, and the commit's sends
// the one COMPLETE or FAIL.
type Tracker struct {
	runID    string
	producer string
	job      Job
	config   string
	// stageRunID is the stage's run id when it is known before the run:
	// a logical run's.
	stageRunID string
	// shard names the shard whose events these are ("2-of-4"); empty
	// for a whole run and for a commit.
	shard string
	// output is the export root with its schema facet; each event adds
	// its own output facets.
	output OutputDataset
	// iceberg is the [iceberg] table of an Iceberg output; nil otherwise.
	iceberg *config.Iceberg
}

// NewTracker returns the tracker of a run of cfg in job namespace
// namespace (DefaultNamespace when empty), with a new run id.
func NewTracker(cfg config.Config, namespace string) (*Tracker, error) {
	runID, err := NewRunID(time.Now())
	if err != nil {
		return nil, fmt.Errorf("lineage of config %s: %w", cfg.Name, err)
	}
	return newTracker(cfg, namespace, runID, "")
}

// NewLogicalRunTracker returns the tracker of the logical run runID of
// cfg's shards (the --run-id every shard and the commit are given), in job
// namespace namespace (DefaultNamespace when empty): its run id is
// LogicalRunID of the namespace, the config and runID, so the events of
// every shard (see Shard) and of the commit belong to one OpenLineage run
// of the config's job, as a whole run's do. The commit's tracker sends
// End alone: COMPLETE, or FAIL when the combined verdict fails.
func NewLogicalRunTracker(cfg config.Config, namespace, runID string) (*Tracker, error) {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	return newTracker(cfg, namespace, LogicalRunID(namespace, cfg.Name, runID), runID)
}

func newTracker(cfg config.Config, namespace, runID, stageRunID string) (*Tracker, error) {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	producer := Producer()
	t := &Tracker{
		runID:      runID,
		producer:   producer,
		job:        Job{Namespace: namespace, Name: cfg.Name},
		config:     cfg.Name,
		stageRunID: stageRunID,
		output: OutputDataset{Facets: DatasetFacets{
			Schema: &SchemaFacet{BaseFacet: BaseFacet{Producer: producer, SchemaURL: SchemaFacetURL}, Fields: SchemaFields(cfg)},
		}},
	}
	var err error
	if config.IsIceberg(cfg.Output) {
		var symlink SymlinkIdentifier
		t.output.Namespace, t.output.Name, symlink, err = icebergDataset(cfg.Iceberg, "")
		t.iceberg = cfg.Iceberg
		t.output.Facets.Symlinks = &SymlinksFacet{BaseFacet: t.base(SymlinksFacetURL), Identifiers: []SymlinkIdentifier{symlink}}
		t.output.Facets.Storage = &StorageFacet{BaseFacet: t.base(StorageFacetURL), StorageLayer: verdict.TableFormatIceberg, FileFormat: "parquet"}
	} else {
		t.output.Namespace, t.output.Name, err = DatasetName(cfg.Output)
	}
	if err != nil {
		return nil, fmt.Errorf("lineage of config %s: %w", cfg.Name, err)
	}
	return t, nil
}

// Shard returns the tracker of shard name (such as "2-of-4") of t's
// logical run: the same run id, job and output dataset, and the shard in
// the databrew_stage facet of each event. A shard's End is RUNNING, not
// COMPLETE or FAIL: a shard does not end the logical run, which its commit
// ends (and a failed shard can run again before that commit).
func (t *Tracker) Shard(name string) *Tracker {
	s := *t
	s.shard = name
	return &s
}

// RunID returns the OpenLineage run id of the run: a UUID.
func (t *Tracker) RunID() string { return t.runID }

// Start returns the START event of the run, at time at.
func (t *Tracker) Start(at time.Time) RunEvent {
	return t.event(EventStart, at, RunFacets{Stage: t.stageFacet()}, t.output)
}

// End returns the event that ends the run from its verdict: FAIL when the
// outcome is failed or the export failed with an error, with the
// errorMessage facet; COMPLETE otherwise, with the outputStatistics facet
// when the run published a run folder (a run with nothing new publishes
// none, so it has no statistics). Its time is the verdict's FinishedAt.
// A shard's tracker returns RUNNING instead, whatever the shard came to
// (its outcome is in the databrew_stage facet), without errorMessage or
// statistics: the shard published nothing, and the logical run goes on.
func (t *Tracker) End(rep verdict.RunReport) RunEvent {
	at := rep.FinishedAt
	if at.IsZero() {
		at = time.Now()
	}
	facets := RunFacets{Stage: t.stageFacet()}
	facets.Stage.RunID = rep.RunID
	facets.Stage.Outcome = string(rep.Outcome)
	facets.Stage.Stop = string(rep.Stop)
	facets.Stage.Productive = &rep.Productive
	if rep.Export.Published {
		facets.Stage.ExportPath = rep.Export.Path
	}
	output := t.tableOutput(t.output, rep.Export.Table)
	if t.shard != "" {
		return t.event(EventRunning, at, facets, output)
	}
	if rep.FailsDownstream() {
		facets.ErrorMessage = &ErrorMessageFacet{
			BaseFacet:           t.base(ErrorMessageFacetURL),
			Message:             ErrorMessage(rep),
			ProgrammingLanguage: ProgrammingLanguage,
		}
		return t.event(EventFail, at, facets, output)
	}
	if rep.Export.Published {
		output.OutputFacets.OutputStatistics = t.outputStatistics(rep.Export)
	}
	return t.event(EventComplete, at, facets, output)
}

// ErrorMessage is the errorMessage facet's message of a failed run: the
// verdict's summary line, then the export's error when the export failed.
func ErrorMessage(rep verdict.RunReport) string {
	msg := rep.Summary()
	if rep.Export.Failed {
		msg += " · export failed: " + rep.Export.Reason
	}
	return msg
}

func (t *Tracker) event(typ EventType, at time.Time, facets RunFacets, output OutputDataset) RunEvent {
	return RunEvent{
		EventType: typ,
		EventTime: at.UTC(),
		Producer:  t.producer,
		SchemaURL: RunEventSchemaURL,
		Run:       Run{RunID: t.runID, Facets: facets},
		Job:       t.job,
		Inputs:    []InputDataset{},
		Outputs:   []OutputDataset{output},
	}
}

func (t *Tracker) stageFacet() *StageRunFacet {
	return &StageRunFacet{BaseFacet: t.base(StageRunFacetURL), Config: t.config, RunID: t.stageRunID, Shard: t.shard}
}

func (t *Tracker) base(schemaURL string) BaseFacet {
	return BaseFacet{Producer: t.producer, SchemaURL: schemaURL}
}
