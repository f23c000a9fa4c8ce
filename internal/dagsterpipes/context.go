package dagsterpipes

import (
	"encoding/json"
	"fmt"
	"os"
)

// Context is the execution context Dagster passes: the fields of the
// protocol's PipesContextData the stage uses.
type Context struct {
	AssetKeys    []string       `json:"asset_keys"`
	PartitionKey *string        `json:"partition_key"`
	RunID        string         `json:"run_id"`
	JobName      *string        `json:"job_name"`
	RetryNumber  int            `json:"retry_number"`
	Extras       map[string]any `json:"extras"`
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
		b, err := os.ReadFile(*p.Path)
		if err != nil {
			return Context{}, fmt.Errorf("%s: read the context: %w", ContextEnv, err)
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
