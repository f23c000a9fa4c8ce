package sink

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/databrew/databrew-stage/extract"
)

// arrowSchema returns the Arrow schema of s: nullable exactly where the
// Parquet column is optional, lists of non-null elements, and the options'
// metadata as schema metadata.
func arrowSchema(s Schema, meta map[string]string) *arrow.Schema {
	fields := make([]arrow.Field, len(s.Fields))
	for i, c := range s.Fields {
		typ := arrowType(c.Type)
		if c.List {
			typ = arrow.ListOfNonNullable(typ)
		}
		fields[i] = arrow.Field{Name: c.Name, Type: typ, Nullable: !c.Required}
	}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	values := make([]string, len(keys))
	for i, k := range keys {
		values[i] = meta[k]
	}
	md := arrow.NewMetadata(keys, values)
	return arrow.NewSchema(fields, &md)
}

// arrowType returns the Arrow type of a scalar of type t.
func arrowType(t extract.Type) arrow.DataType {
	switch t {
	case extract.TypeInt64:
		return arrow.PrimitiveTypes.Int64
	case extract.TypeFloat64:
		return arrow.PrimitiveTypes.Float64
	case extract.TypeBool:
		return arrow.FixedWidthTypes.Boolean
	case extract.TypeTimestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	default:
		return arrow.BinaryTypes.String
	}
}
