package dagsterpipes

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Context is the execution context Dagster passes: the fields of the
// protocol's PipesContextData the stage uses.
type Context struct {
	AssetKeys    []string `json:"asset_keys"`
	PartitionKey *string  `json:"partition_key"`
	RunID        string   `json:"run_id"`
	JobName      *string  `json:"job_name"`
	RetryNumber  int      `json:"retry_number"`
	// Extras are kept as they came: the stage reads none of them.
	Extras json.RawMessage `json:"extras"`
}

// contextParams says where the context is.
type contextParams struct {
	Path *string          `json:"path"`
	Data *json.RawMessage `json:"data"`
}

// loadContext reads the context its parameters point at.
func loadContext(encoded string) (Context, error) {
	var p contextParams
	if err := decodeParam(encoded, &p); err != nil {
		return Context{}, fmt.Errorf("%s: %w", ContextEnv, err)
	}
	var raw []byte
	switch {
	case p.Path != nil:
		b, err := readRegular(*p.Path, maxContextBytes)
		if errors.Is(err, errNotRegular) {
			return Context{}, fmt.Errorf(`%s: the context path %s %w: Dagster writes a context to a regular file, or passes it inline as "data"`,
				ContextEnv, *p.Path, err)
		}
		if err != nil {
			return Context{}, fmt.Errorf("%s: read the context %s: %w", ContextEnv, *p.Path, err)
		}
		raw = b
	case p.Data != nil:
		raw = *p.Data
	default:
		return Context{}, fmt.Errorf(`%s: the parameters hold neither "path" nor "data"`, ContextEnv)
	}
	var c Context
	if err := json.Unmarshal(raw, &c); err != nil {
		return Context{}, fmt.Errorf("%s: the context is not a JSON object: %w", ContextEnv, err)
	}
	return c, nil
}
