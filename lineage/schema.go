package lineage

import (
	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/sink"
)

// systemColumnDescriptions describe the system columns that end every
// export, in the words of docs/outputs.md.
var systemColumnDescriptions = map[string]string{
	sink.ColumnKey:       "the item's key",
	sink.ColumnURL:       "the item page's URL",
	sink.ColumnChange:    "new, changed or removed",
	sink.ColumnFetchedAt: "when the version was fetched (µs, UTC)",
	sink.ColumnRunID:     "the stage run that fetched the version",
	sink.ColumnHash:      "the content hash of the item's values",
}

// SchemaFields returns the export's columns as the schema facet lists
// them: the config's fields in declared order, then the system columns,
// each with its type as the config names it (string, int64, float64, bool,
// timestamp); a list column is of type "array" with its element as its one
// nested field "_element", as OpenLineage's integrations write lists.
func SchemaFields(cfg config.Config) []SchemaField {
	schema := sink.SchemaFor(cfg.Extract.Fields, cfg.Export.Tombstones)
	fields := make([]SchemaField, len(schema.Fields))
	for i, c := range schema.Fields {
		f := SchemaField{Name: c.Name, Type: string(c.Type), Description: systemColumnDescriptions[c.Name], OrdinalPosition: i + 1}
		if c.List {
			f.Fields = []SchemaField{{Name: "_element", Type: f.Type}}
			f.Type = "array"
		}
		fields[i] = f
	}
	return fields
}
