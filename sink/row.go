package sink

import (
	"fmt"
	"time"

	"github.com/databrew/databrew-stage/extract"
)

// Row is one exported item version. Its strings may be read a few
// thousand rows after Write returns, so they must be ordinary immutable
// Go strings, not views of reused buffers.
type Row struct {
	// Key, URL, Change, RunID and Hash fill the system columns of the same
	// name; Change is "new", "changed" or "removed".
	Key, URL, Change, RunID, Hash string
	// FetchedAt fills _fetched_at, stored in microseconds UTC.
	FetchedAt time.Time
	// Values holds one value per user column (Schema.User), in order: nil
	// (NULL), string, int64, float64, bool or time.Time for a scalar
	// column; nil (NULL), []string, []int64, []float64, []bool or
	// []time.Time for a list column, where a nil slice is an empty list.
	// Timestamps are stored in microseconds UTC (finer digits are
	// dropped).
	Values []any
}

// checkRow reports the first value of r that does not fit the user columns.
func checkRow(user []Column, r *Row) error {
	switch r.Change {
	case "new", "changed", "removed":
	default:
		return fmt.Errorf("row %q: %s %q is not new, changed or removed", r.Key, ColumnChange, r.Change)
	}
	if len(r.Values) != len(user) {
		return fmt.Errorf("row %q: %d values for %d columns", r.Key, len(r.Values), len(user))
	}
	for i := range user {
		if err := checkValue(&user[i], r.Values[i]); err != nil {
			return fmt.Errorf("row %q: column %q: %w", r.Key, user[i].Name, err)
		}
	}
	return nil
}

// checkValue reports whether v has the Go type column c stores.
func checkValue(c *Column, v any) error {
	if v == nil {
		if c.Required {
			return fmt.Errorf("null in a required column")
		}
		return nil
	}
	var ok bool
	switch c.Type {
	case extract.TypeString:
		ok = is[string](c.List, v)
	case extract.TypeInt64:
		ok = is[int64](c.List, v)
	case extract.TypeFloat64:
		ok = is[float64](c.List, v)
	case extract.TypeBool:
		ok = is[bool](c.List, v)
	case extract.TypeTimestamp:
		ok = is[time.Time](c.List, v)
	}
	if !ok {
		return fmt.Errorf("%T is not a %s", v, typeName(c))
	}
	return nil
}

// is reports whether v is a T, or a []T when list is set.
func is[T any](list bool, v any) bool {
	if list {
		_, ok := v.([]T)
		return ok
	}
	_, ok := v.(T)
	return ok
}

// typeName describes the type of c for messages: "int64", "list<string>".
func typeName(c *Column) string {
	if c.List {
		return "list<" + string(c.Type) + ">"
	}
	return string(c.Type)
}
