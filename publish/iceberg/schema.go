package iceberg

import (
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/sink"
)

// The stage's own columns of the table, after the config's fields.
const (
	ColumnKey    = "_key"
	ColumnChange = "_change"
	ColumnURL    = "_url"
	ColumnRunID  = "_run_id"
	// ColumnSeenAt holds sink.Row.FetchedAt, a timestamptz in µs.
	ColumnSeenAt = "_seen_at"
	// PartitionField is the name of the table's partition field,
	// day(_seen_at).
	PartitionField = "_seen_at_day"
)

// stageColumns lists the stage's columns in table order, all required.
var stageColumns = []struct {
	name string
	typ  iceberg.Type
}{
	{ColumnKey, iceberg.PrimitiveTypes.String},
	{ColumnChange, iceberg.PrimitiveTypes.String},
	{ColumnURL, iceberg.PrimitiveTypes.String},
	{ColumnRunID, iceberg.PrimitiveTypes.String},
	{ColumnSeenAt, iceberg.PrimitiveTypes.TimestampTz},
}

// isStageColumn reports whether name is one of the stage's columns.
func isStageColumn(name string) bool {
	for _, c := range stageColumns {
		if c.name == name {
			return true
		}
	}
	return false
}

// columnType returns the Iceberg type of user column c; a list's element
// ID is 0 until the table assigns one.
func columnType(c sink.Column) (iceberg.Type, error) {
	var t iceberg.PrimitiveType
	switch c.Type {
	case extract.TypeString:
		t = iceberg.PrimitiveTypes.String
	case extract.TypeInt64:
		t = iceberg.PrimitiveTypes.Int64
	case extract.TypeFloat64:
		t = iceberg.PrimitiveTypes.Float64
	case extract.TypeBool:
		t = iceberg.PrimitiveTypes.Bool
	case extract.TypeTimestamp:
		t = iceberg.PrimitiveTypes.TimestampTz
	default:
		return nil, fmt.Errorf("column %s: type %q has no Iceberg type", c.Name, c.Type)
	}
	if c.List {
		return &iceberg.ListType{Element: t, ElementRequired: true}, nil
	}
	return t, nil
}

// newSchema returns the schema of a new table for the user columns: each
// user column optional (the stage checks required fields, so a field can
// become optional without a new table), then the stage's required
// columns. The IDs are provisional: the catalog assigns fresh ones. The
// second result is the ID of _seen_at, the partition source.
func newSchema(user []sink.Column) (*iceberg.Schema, int, error) {
	fields := make([]iceberg.NestedField, 0, len(user)+len(stageColumns))
	id := 0
	next := func() int { id++; return id }
	for _, c := range user {
		if isStageColumn(c.Name) {
			return nil, 0, fmt.Errorf("field %s has the name of a column of the stage", c.Name)
		}
		t, err := columnType(c)
		if err != nil {
			return nil, 0, err
		}
		f := iceberg.NestedField{ID: next(), Name: c.Name, Type: t}
		if l, ok := t.(*iceberg.ListType); ok {
			l.ElementID = next()
		}
		fields = append(fields, f)
	}
	seenAt := 0
	for _, c := range stageColumns {
		f := iceberg.NestedField{ID: next(), Name: c.name, Type: c.typ, Required: true}
		if c.name == ColumnSeenAt {
			seenAt = f.ID
		}
		fields = append(fields, f)
	}
	return iceberg.NewSchema(0, fields...), seenAt, nil
}

// sameType reports whether the table's column type have is the type
// column c needs.
func sameType(have iceberg.Type, c sink.Column) bool {
	want, err := columnType(c)
	if err != nil {
		return false
	}
	wl, wantList := want.(*iceberg.ListType)
	hl, haveList := have.(*iceberg.ListType)
	switch {
	case wantList != haveList:
		return false
	case wantList:
		// A list of nullable elements reads every list the stage writes.
		return hl.Element.Equals(wl.Element)
	default:
		return have.Equals(want)
	}
}

// configTypeName describes the type of c in the config's words.
func configTypeName(c sink.Column) string {
	if c.List {
		return "list<" + string(c.Type) + ">"
	}
	return string(c.Type)
}

// schemaDiff compares the table's current schema with the export's user
// columns. It returns the user columns the table lacks, to add, or an
// error naming the first column that cannot be reconciled and what to do.
func schemaDiff(tableName string, sc *iceberg.Schema, user []sink.Column) ([]sink.Column, error) {
	inConfig := make(map[string]bool, len(user))
	var missing []sink.Column
	for _, c := range user {
		if isStageColumn(c.Name) {
			return nil, fmt.Errorf("field %s has the name of a column of the stage: rename the field", c.Name)
		}
		inConfig[c.Name] = true
		f, ok := sc.FindFieldByName(c.Name)
		if !ok {
			missing = append(missing, c)
			continue
		}
		if !sameType(f.Type, c) {
			return nil, fmt.Errorf("the table %s has column %s as %s, the config says %s: change the field back or publish into a new table",
				tableName, c.Name, f.Type, configTypeName(c))
		}
	}
	for _, sc0 := range stageColumns {
		f, ok := sc.FindFieldByName(sc0.name)
		switch {
		case !ok:
			return nil, fmt.Errorf("the table %s has no column %s, which the stage writes: publish into a new table", tableName, sc0.name)
		case !f.Type.Equals(sc0.typ):
			return nil, fmt.Errorf("the table %s has column %s as %s, the stage writes %s: publish into a new table", tableName, sc0.name, f.Type, sc0.typ)
		}
	}
	for _, f := range sc.Fields() {
		if !inConfig[f.Name] && !isStageColumn(f.Name) {
			return nil, fmt.Errorf("the table %s has column %s, the config has no field %s: add the field back or publish into a new table",
				tableName, f.Name, f.Name)
		}
	}
	return missing, nil
}
