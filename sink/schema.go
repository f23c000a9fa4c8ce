package sink

import (
	"errors"
	"fmt"

	"github.com/databrew/databrew-stage/extract"
)

// The system columns that follow the user fields, in this order.
const (
	ColumnKey       = "_key"
	ColumnURL       = "_url"
	ColumnChange    = "_change"
	ColumnFetchedAt = "_fetched_at"
	ColumnRunID     = "_run_id"
	ColumnHash      = "_hash"
)

// Column is one column of the export.
type Column struct {
	// Name is the column name, e.g. "price".
	Name string `json:"name"`
	// Type is the type of the column's values (of its elements for a list).
	Type extract.Type `json:"type"`
	// List makes the column a list of Type (a Multiple field).
	List bool `json:"list"`
	// Required makes the column non-null.
	Required bool `json:"required"`
}

// Schema is the export's columns: the user fields in declared order, then
// the system columns _key, _url, _change, _fetched_at, _run_id and _hash
// (required strings, except _fetched_at: a required timestamp, µs UTC).
type Schema struct{ Fields []Column }

// systemColumns lists the system columns in order.
var systemColumns = []Column{
	{Name: ColumnKey, Type: extract.TypeString, Required: true},
	{Name: ColumnURL, Type: extract.TypeString, Required: true},
	{Name: ColumnChange, Type: extract.TypeString, Required: true},
	{Name: ColumnFetchedAt, Type: extract.TypeTimestamp, Required: true},
	{Name: ColumnRunID, Type: extract.TypeString, Required: true},
	{Name: ColumnHash, Type: extract.TypeString, Required: true},
}

// SystemColumns returns the system columns that end every Schema, in order.
func SystemColumns() []Column { return append([]Column(nil), systemColumns...) }

// NewSchema returns the schema with the user columns in the given order,
// followed by the system columns.
func NewSchema(user []Column) Schema {
	fields := make([]Column, 0, len(user)+len(systemColumns))
	fields = append(fields, user...)
	return Schema{Fields: append(fields, systemColumns...)}
}

// SchemaFor returns the export schema of the config's fields. A column is
// Required when its field is required and nullableAll is false; an empty
// field type means string.
func SchemaFor(fields []extract.FieldSpec, nullableAll bool) Schema {
	user := make([]Column, len(fields))
	for i, f := range fields {
		typ := f.Type
		if typ == "" {
			typ = extract.TypeString
		}
		user[i] = Column{Name: f.Name, Type: typ, List: f.Multiple, Required: f.Required && !nullableAll}
	}
	return NewSchema(user)
}

// User returns the user columns: Fields without the trailing system columns.
// Row.Values and DecodeValues are aligned with them.
func (s Schema) User() []Column {
	n := len(s.Fields) - len(systemColumns)
	if n < 0 {
		n = 0
	}
	return s.Fields[:n]
}

// Validate reports whether s is a usable export schema: non-empty unique
// names, known types, and the system columns exactly at the end.
func (s Schema) Validate() error {
	if len(s.Fields) < len(systemColumns) {
		return errors.New("schema lacks the system columns (build it with NewSchema or SchemaFor)")
	}
	user := s.User()
	for i, want := range systemColumns {
		if got := s.Fields[len(user)+i]; got != want {
			return fmt.Errorf("schema column %d is %+v, want system column %+v", len(user)+i, got, want)
		}
	}
	seen := make(map[string]bool, len(s.Fields))
	for _, c := range s.Fields {
		switch {
		case c.Name == "":
			return errors.New("schema has a column without a name")
		case seen[c.Name]:
			return fmt.Errorf("schema has two columns named %q", c.Name)
		case !c.Type.Valid():
			return fmt.Errorf("column %q: unknown type %q", c.Name, c.Type)
		}
		seen[c.Name] = true
	}
	return nil
}
