package iceberg

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/sink"
)

func TestNewSchema(t *testing.T) {
	sc, seenAt, err := newSchema(userColumns)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range sc.Fields() {
		got = append(got, fmt.Sprintf("%s %s %v", f.Name, f.Type, f.Required))
	}
	want := []string{
		"title string false", "price double false", "pages long false", "in_stock boolean false",
		"published timestamptz false", "tags list<string> false",
		"_key string true", "_change string true", "_url string true", "_run_id string true", "_seen_at timestamptz true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("columns\n %v\nwant\n %v", got, want)
	}
	if f, ok := sc.FindFieldByID(seenAt); !ok || f.Name != ColumnSeenAt {
		t.Errorf("partition source %d is %v, want _seen_at", seenAt, f)
	}
	if l := sc.Fields()[5].Type.(*iceberg.ListType); !l.ElementRequired || l.ElementID == 0 {
		t.Errorf("tags elements: %+v, want required with an id", l)
	}
	// IDs are unique, the list's element included.
	seen := map[int]bool{}
	for _, f := range sc.Fields() {
		ids := []int{f.ID}
		if l, ok := f.Type.(*iceberg.ListType); ok {
			ids = append(ids, l.ElementID)
		}
		for _, id := range ids {
			if seen[id] {
				t.Errorf("id %d used twice", id)
			}
			seen[id] = true
		}
	}
}

func TestSchemaDiff(t *testing.T) {
	sc, _, err := newSchema(userColumns)
	if err != nil {
		t.Fatal(err)
	}
	with := func(edit func(cols []sink.Column) []sink.Column) []sink.Column {
		return edit(slices.Clone(userColumns))
	}
	isbn := sink.Column{Name: "isbn", Type: extract.TypeString, Required: true}
	cases := []struct {
		name    string
		user    []sink.Column
		missing []string
		err     string
	}{
		{"same", userColumns, nil, ""},
		{"required changed", with(func(c []sink.Column) []sink.Column { c[0].Required = false; c[1].Required = true; return c }), nil, ""},
		{"reordered", with(func(c []sink.Column) []sink.Column { c[0], c[1] = c[1], c[0]; return c }), nil, ""},
		{"added", with(func(c []sink.Column) []sink.Column { return append(c, isbn) }), []string{"isbn"}, ""},
		{"retyped", with(func(c []sink.Column) []sink.Column { c[2].Type = extract.TypeFloat64; return c }), nil,
			"the table books has column pages as long, the config says float64: change the field back or publish into a new table"},
		{"timestamp made string", with(func(c []sink.Column) []sink.Column { c[4].Type = extract.TypeString; return c }), nil,
			"column published as timestamptz, the config says string"},
		{"list made scalar", with(func(c []sink.Column) []sink.Column { c[5].List = false; return c }), nil,
			"column tags as list<string>, the config says string"},
		{"removed", with(func(c []sink.Column) []sink.Column { return c[:5] }), nil,
			"the table books has column tags, the config has no field tags: add the field back or publish into a new table"},
		{"renamed", with(func(c []sink.Column) []sink.Column { c[3].Name = "available"; return c }), nil,
			"the table books has column in_stock, the config has no field in_stock"},
		{"stage column", with(func(c []sink.Column) []sink.Column {
			return append(c, sink.Column{Name: ColumnSeenAt, Type: extract.TypeTimestamp})
		}), nil, "field _seen_at has the name of a column of the stage"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			missing, err := schemaDiff("books", sc, c.user)
			switch {
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one with %q", err, c.err)
			}
			var names []string
			for _, m := range missing {
				names = append(names, m.Name)
			}
			if !slices.Equal(names, c.missing) {
				t.Errorf("missing %v, want %v", names, c.missing)
			}
		})
	}

	// A table without a stage column (not written by the stage).
	bare := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "title", Type: iceberg.PrimitiveTypes.String})
	if _, err := schemaDiff("books", bare, userColumns[:1]); err == nil || !strings.Contains(err.Error(), "has no column _key, which the stage writes") {
		t.Errorf("a table without _key: %v", err)
	}
}
