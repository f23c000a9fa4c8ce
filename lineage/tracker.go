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
type Tracker struct {
	runID    string
	producer string
	job      Job
	config   string
	// output is the export root with its schema facet; each event adds
	// its own output facets.
	output OutputDataset
}

// NewTracker returns the tracker of a run of cfg in job namespace
// namespace (DefaultNamespace when empty), with a new run id.
func NewTracker(cfg config.Config, namespace string) (*Tracker, error) {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	dsNamespace, dsName, err := DatasetName(cfg.Output)
	if err != nil {
		return nil, fmt.Errorf("lineage of config %s: %w", cfg.Name, err)
	}
	runID, err := NewRunID(time.Now())
	if err != nil {
		return nil, fmt.Errorf("lineage of config %s: %w", cfg.Name, err)
	}
	producer := Producer()
	return &Tracker{
		runID:    runID,
		producer: producer,
		job:      Job{Namespace: namespace, Name: cfg.Name},
		config:   cfg.Name,
		output: OutputDataset{Namespace: dsNamespace, Name: dsName, Facets: DatasetFacets{
			Schema: &SchemaFacet{BaseFacet: BaseFacet{Producer: producer, SchemaURL: SchemaFacetURL}, Fields: SchemaFields(cfg)},
		}},
	}, nil
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
	output := t.output
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
	return &StageRunFacet{BaseFacet: t.base(StageRunFacetURL), Config: t.config}
}

func (t *Tracker) base(schemaURL string) BaseFacet {
	return BaseFacet{Producer: t.producer, SchemaURL: schemaURL}
}
