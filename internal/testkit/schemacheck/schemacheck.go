// Package schemacheck validates JSON output against the published schemas.
// Only tests import it, so the validator never enters the binary.
package schemacheck

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/databrew/databrew-stage/schemas"
)

var (
	once    sync.Once
	verdict *jsonschema.Schema
	report  *jsonschema.Schema
	loadErr error
)

func load() {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for id, doc := range map[string][]byte{schemas.VerdictID: schemas.Verdict, schemas.ReportID: schemas.Report} {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
		if err != nil {
			loadErr = fmt.Errorf("parse schema %s: %w", id, err)
			return
		}
		if err := c.AddResource(id, v); err != nil {
			loadErr = fmt.Errorf("add schema %s: %w", id, err)
			return
		}
	}
	if verdict, loadErr = c.Compile(schemas.VerdictID); loadErr != nil {
		return
	}
	report, loadErr = c.Compile(schemas.ReportID)
}

// Verdict validates one verdict JSON document.
func Verdict(doc []byte) error { return validate(doc, func() *jsonschema.Schema { return verdict }) }

// Report validates one line of report --json.
func Report(doc []byte) error { return validate(doc, func() *jsonschema.Schema { return report }) }

func validate(doc []byte, schema func() *jsonschema.Schema) error {
	once.Do(load)
	if loadErr != nil {
		return loadErr
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return schema().Validate(v)
}

// Lines validates every non-empty line of JSON Lines output with check.
func Lines(out []byte, check func([]byte) error) (int, error) {
	n := 0
	for _, line := range bytes.Split(out, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		n++
		if err := check(line); err != nil {
			return n, fmt.Errorf("line %d: %w", n, err)
		}
	}
	return n, nil
}
