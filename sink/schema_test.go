package sink

import (
	"reflect"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/extract"
)

func TestSchemaFor(t *testing.T) {
	fields := []extract.FieldSpec{
		{Name: "title", Required: true},
		{Name: "price", Type: extract.TypeFloat64},
		{Name: "tags", Multiple: true, Required: true},
	}
	got := SchemaFor(fields, false)
	want := append([]Column{
		{Name: "title", Type: extract.TypeString, Required: true},
		{Name: "price", Type: extract.TypeFloat64},
		{Name: "tags", Type: extract.TypeString, List: true, Required: true},
	}, SystemColumns()...)
	if !reflect.DeepEqual(got.Fields, want) {
		t.Errorf("SchemaFor = %+v\nwant %+v", got.Fields, want)
	}
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
	if n := len(got.User()); n != 3 {
		t.Errorf("User() has %d columns, want 3", n)
	}
	for _, c := range SchemaFor(fields, true).User() {
		if c.Required {
			t.Errorf("nullableAll: column %q is required", c.Name)
		}
	}
}

func TestOrderedGroup(t *testing.T) {
	ps := parquetSchema(SchemaFor([]extract.FieldSpec{{Name: "b"}, {Name: "a", Type: extract.TypeInt64, Multiple: true}}, false))
	got := ps.Columns()
	want := [][]string{{"b"}, {"a", "list", "element"}, {"_key"}, {"_url"}, {"_change"}, {"_fetched_at"}, {"_run_id"}, {"_hash"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columns = %q, want %q", got, want)
	}
	if s := ps.String(); !strings.Contains(s, "optional binary b (STRING)") || strings.Index(s, " b ") > strings.Index(s, " a ") {
		t.Errorf("schema prints as\n%s", s)
	}
	typ := ps.GoType()
	if typ.NumField() != len(want) || typ.Field(1).Tag.Get("parquet") != "a" {
		t.Errorf("GoType = %v", typ)
	}
}
