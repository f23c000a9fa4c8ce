package lineage

import "time"

// SpecURL is the OpenLineage spec version the events follow.
const SpecURL = "https://openlineage.io/spec/2-0-2/OpenLineage.json"

// RunEventSchemaURL is every event's schemaURL: the RunEvent definition of
// SpecURL.
const RunEventSchemaURL = SpecURL + "#/$defs/RunEvent"

// EventType is the transition of a run's state that an event reports.
type EventType string

// The event types a stage run emits: START before it, then COMPLETE or
// FAIL. A shard of a logical run ends with RUNNING: the logical run goes
// on until its commit sends COMPLETE or FAIL.
const (
	EventStart    EventType = "START"
	EventRunning  EventType = "RUNNING"
	EventComplete EventType = "COMPLETE"
	EventFail     EventType = "FAIL"
)

// RunEvent is one OpenLineage RunEvent.
type RunEvent struct {
	EventType EventType `json:"eventType"`
	// EventTime is when the transition happened, in UTC; it encodes as RFC
	// 3339.
	EventTime time.Time       `json:"eventTime"`
	Producer  string          `json:"producer"`
	SchemaURL string          `json:"schemaURL"`
	Run       Run             `json:"run"`
	Job       Job             `json:"job"`
	Inputs    []InputDataset  `json:"inputs"`
	Outputs   []OutputDataset `json:"outputs"`
}

// Run identifies the run an event belongs to.
type Run struct {
	// RunID is a UUID, the same in every event of one run.
	RunID  string    `json:"runId"`
	Facets RunFacets `json:"facets"`
}

// Job is the recurring job a run is an instance of: for a stage, a config.
type Job struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Facets is empty: the stage sends no job facets.
	Facets struct{} `json:"facets"`
}

// InputDataset is a dataset a run reads. A stage reads web pages, which no
// dataset describes, so its events list none.
type InputDataset struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// OutputDataset is a dataset a run writes: for a stage, its export root.
type OutputDataset struct {
	Namespace    string              `json:"namespace"`
	Name         string              `json:"name"`
	Facets       DatasetFacets       `json:"facets"`
	OutputFacets OutputDatasetFacets `json:"outputFacets"`
}
