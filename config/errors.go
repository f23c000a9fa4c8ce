package config

import (
	"errors"
	"fmt"
	"strings"
)

// Error is one problem in a config file, located by file, line and key.
type Error struct {
	File string
	Line int // 0 when the key is not in the file (a missing required key)
	Key  string
	Msg  string
}

// Error formats as "books.toml:12: policy.pause: invalid duration ...".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		b.WriteString(": ")
		b.WriteString(e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Errors lists every problem found in one config file.
type Errors []*Error

// Error joins the problems one per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes each problem to errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// AsErrors returns the located problems inside err, if any.
func AsErrors(err error) Errors {
	var es Errors
	if errors.As(err, &es) {
		return es
	}
	var e *Error
	if errors.As(err, &e) {
		return Errors{e}
	}
	return nil
}
