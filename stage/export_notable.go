//go:build !iceberg

package stage

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/databrew/databrew-stage/config"
)

// icebergTable is what a binary built without Iceberg has of a table:
// nothing (config refuses an iceberg:// output first).
type icebergTable struct{}

// Close does nothing.
func (*icebergTable) Close() error { return nil }

// openTableExporter fails: this binary was built without Iceberg.
func openTableExporter(context.Context, config.Config, Options, *slog.Logger) (*exporter, int, error) {
	return nil, 0, fmt.Errorf("iceberg:// outputs need a binary built with Iceberg: make build-iceberg, or go build -tags iceberg ./cmd/databrew-stage")
}
