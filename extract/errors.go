package extract

import (
	"errors"
	"strings"
)

// SpecError is one problem Compile found in a Spec. Field names the place
// in the configuration ("listing.item_links", "item.fields.price", "item")
// and Key the setting at fault ("css", "regex", "type", "key", ...).
type SpecError struct {
	Field string
	Key   string
	Err   error
}

// Error returns "field: key: problem".
func (e *SpecError) Error() string {
	return e.Field + ": " + e.Key + ": " + e.Err.Error()
}

// Unwrap returns the underlying problem.
func (e *SpecError) Unwrap() error { return e.Err }

// SpecErrors returns every *SpecError in err, which may be a single
// *SpecError or a tree of joined or wrapped errors; nil when there is none.
func SpecErrors(err error) []*SpecError {
	var out []*SpecError
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if se, ok := err.(*SpecError); ok {
			out = append(out, se)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// UnusableError reports a page, card or row that lacks required fields,
// or a page or card whose rows match nothing. Missing lists the names of
// the required fields that had no usable value, in field order (none when
// there was no row); Reasons explains why.
type UnusableError struct {
	URL     string
	Missing []string
	Reasons []string
}

// Error returns e.g. "unusable page: missing required fields price, upc",
// or without missing fields "unusable page: " and the reasons.
func (e *UnusableError) Error() string {
	if len(e.Missing) == 0 {
		return "unusable page: " + strings.Join(e.Reasons, "; ")
	}
	var b strings.Builder
	b.WriteString("unusable page: missing required field")
	if len(e.Missing) != 1 {
		b.WriteByte('s')
	}
	b.WriteByte(' ')
	b.WriteString(strings.Join(e.Missing, ", "))
	if len(e.Reasons) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(e.Reasons, "; "))
		b.WriteByte(')')
	}
	return b.String()
}

// IsUnusable reports whether err is or wraps an *UnusableError.
func IsUnusable(err error) bool {
	var ue *UnusableError
	return errors.As(err, &ue)
}
