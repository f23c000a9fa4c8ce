package sink

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/databrew/databrew-stage/extract"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// parquetSchema returns the Parquet schema of s with its columns in
// declared order. parquet.Group cannot be used for the root: it is a map
// and lists its fields sorted by name.
func parquetSchema(s Schema) *parquet.Schema {
	fields := make([]parquet.Field, len(s.Fields))
	for i := range s.Fields {
		fields[i] = &orderedField{Node: parquetNode(&s.Fields[i]), name: s.Fields[i].Name}
	}
	return parquet.NewSchema("schema", &orderedGroup{fields: fields})
}

// parquetNode returns the Parquet node of one column: a leaf, or a standard
// three-level LIST of required elements; optional unless c is Required.
func parquetNode(c *Column) parquet.Node {
	var n parquet.Node
	switch c.Type {
	case extract.TypeInt64:
		n = parquet.Int(64)
	case extract.TypeFloat64:
		n = parquet.Leaf(parquet.DoubleType)
	case extract.TypeBool:
		n = parquet.Leaf(parquet.BooleanType)
	case extract.TypeTimestamp:
		n = parquet.Timestamp(parquet.Microsecond)
	default:
		n = parquet.String()
		if c.Name == ColumnChange || c.Name == ColumnRunID {
			n = parquet.Encoded(n, &parquet.RLEDictionary)
		}
	}
	if c.List {
		n = parquet.List(n)
	}
	if !c.Required {
		n = parquet.Optional(n)
	}
	return n
}

// orderedGroup is a required group node whose fields keep their order.
type orderedGroup struct{ fields []parquet.Field }

// ID returns 0: the group carries no field id.
func (g *orderedGroup) ID() int { return 0 }

// String returns the group in Parquet schema notation.
func (g *orderedGroup) String() string {
	var b strings.Builder
	_ = parquet.PrintSchema(&b, "", g)
	return b.String()
}

// Type returns the type parquet-go gives every group.
func (g *orderedGroup) Type() parquet.Type { return parquet.Group{}.Type() }

// Optional returns false: the group is required.
func (g *orderedGroup) Optional() bool { return false }

// Repeated returns false: the group is required.
func (g *orderedGroup) Repeated() bool { return false }

// Required returns true.
func (g *orderedGroup) Required() bool { return true }

// Leaf returns false: a group has fields.
func (g *orderedGroup) Leaf() bool { return false }

// Fields returns the fields in declared order.
func (g *orderedGroup) Fields() []parquet.Field { return g.fields }

// Encoding returns nil: groups have no encoding.
func (g *orderedGroup) Encoding() encoding.Encoding { return nil }

// Compression returns nil: groups have no codec.
func (g *orderedGroup) Compression() compress.Codec { return nil }

// GoType returns a struct type with one field per column, tagged with the
// column name, as parquet-go builds for its own groups.
func (g *orderedGroup) GoType() reflect.Type {
	fields := make([]reflect.StructField, len(g.fields))
	for i, f := range g.fields {
		fields[i] = reflect.StructField{
			Name: "F" + strconv.Itoa(i),
			Type: f.GoType(),
			Tag:  reflect.StructTag(`parquet:` + strconv.Quote(f.Name())),
		}
	}
	return reflect.StructOf(fields)
}

// orderedField is a named field of an orderedGroup.
type orderedField struct {
	parquet.Node
	name string
}

// Name returns the column name.
func (f *orderedField) Name() string { return f.name }

// Value returns the field of a Go struct or map holding the group's values:
// the struct field tagged with the name (see GoType) or the map entry.
func (f *orderedField) Value(base reflect.Value) reflect.Value {
	for base.Kind() == reflect.Interface || base.Kind() == reflect.Pointer {
		if base.IsNil() {
			return reflect.Value{}
		}
		base = base.Elem()
	}
	switch base.Kind() {
	case reflect.Struct:
		t := base.Type()
		for i := range t.NumField() {
			if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("parquet"), ","); tag == f.name {
				return base.Field(i)
			}
		}
	case reflect.Map:
		return base.MapIndex(reflect.ValueOf(f.name))
	}
	return reflect.Value{}
}
