package lineage

// The schema URLs of the facets the events carry: each facet's published
// JSON Schema and its definition in it.
const (
	SchemaFacetURL           = "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet"
	OutputStatisticsFacetURL = "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet"
	ErrorMessageFacetURL     = "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet"
	// StageRunFacetURL is the schema of the custom run facet: the file
	// DatabrewStageRunFacet.json of this package.
	StageRunFacetURL = "https://raw.githubusercontent.com/databrew/databrew-stage/main/lineage/DatabrewStageRunFacet.json#/$defs/DatabrewStageRunFacet"
)

// BaseFacet is what every facet carries: who wrote it and its schema.
type BaseFacet struct {
	Producer  string `json:"_producer"`
	SchemaURL string `json:"_schemaURL"`
}

// RunFacets are the facets of a run; nil ones are left out.
type RunFacets struct {
	// ErrorMessage says why a run failed; FAIL events only.
	ErrorMessage *ErrorMessageFacet `json:"errorMessage,omitempty"`
	// Stage is the stage's own account of the run.
	Stage *StageRunFacet `json:"databrew_stage,omitempty"`
}

// ErrorMessageFacet is the errorMessage run facet.
type ErrorMessageFacet struct {
	BaseFacet
	Message             string `json:"message"`
	ProgrammingLanguage string `json:"programmingLanguage"`
}

// StageRunFacet is the custom run facet databrew_stage: the stage's run id
// (its verdict's run_id, which names the run folder of the export) and the
// verdict in brief. START knows only the config (and the run id of a
// logical run, which the orchestrator gives); the end event has the rest.
// The events of a shard of a logical run name the shard; no other run's
// carry it.
type StageRunFacet struct {
	BaseFacet
	Config     string `json:"config"`
	RunID      string `json:"runId,omitempty"`
	Shard      string `json:"shard,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
	Stop       string `json:"stop,omitempty"`
	Productive *bool  `json:"productive,omitempty"`
	// ExportPath is the run folder the run published, when it did.
	ExportPath string `json:"exportPath,omitempty"`
}

// DatasetFacets are the facets of a dataset; nil ones are left out.
type DatasetFacets struct {
	Schema *SchemaFacet `json:"schema,omitempty"`
	// Symlinks, Storage and Version are an Iceberg table's: its name in
	// the catalog, the table and file formats, and (in a COMPLETE event)
	// the snapshot the run committed.
	Symlinks *SymlinksFacet `json:"symlinks,omitempty"`
	Storage  *StorageFacet  `json:"storage,omitempty"`
	Version  *VersionFacet  `json:"version,omitempty"`
}

// SchemaFacet is the schema dataset facet: the export's columns.
type SchemaFacet struct {
	BaseFacet
	Fields []SchemaField `json:"fields"`
}

// SchemaField is one column of a SchemaFacet; a list column has its
// element as its one nested field, named "_element".
type SchemaField struct {
	Name            string        `json:"name"`
	Type            string        `json:"type"`
	Description     string        `json:"description,omitempty"`
	OrdinalPosition int           `json:"ordinal_position,omitempty"`
	Fields          []SchemaField `json:"fields,omitempty"`
}

// OutputDatasetFacets are the facets of an output dataset in one run; nil
// ones are left out.
type OutputDatasetFacets struct {
	OutputStatistics *OutputStatisticsFacet `json:"outputStatistics,omitempty"`
}

// OutputStatisticsFacet is the outputStatistics facet: what one run wrote.
type OutputStatisticsFacet struct {
	BaseFacet
	RowCount  int64 `json:"rowCount"`
	FileCount int64 `json:"fileCount"`
	// Size is the bytes written; nil when unknown (object storage).
	Size *int64 `json:"size,omitempty"`
}
