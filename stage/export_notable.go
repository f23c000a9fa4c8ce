//go:build !iceberg

package stage

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/publish"
)

// icebergTable is what a binary built without Iceberg has of a table:
// nothing (config refuses an iceberg:// output first).
type icebergTable struct{}

// Close does nothing.
func (*icebergTable) Close() error { return nil }

// errNoIceberg is the error of an iceberg:// output in a binary built
// without Iceberg.
var errNoIceberg = fmt.Errorf("iceberg:// outputs need a binary built with Iceberg: make build-iceberg, or go build -tags iceberg ./cmd/databrew-stage")

// openTableExporter fails: this binary was built without Iceberg.
func openTableExporter(context.Context, config.Config, Options, *slog.Logger) (*exporter, int, error) {
	return nil, 0, errNoIceberg
}

// openTableOutput fails: this binary was built without Iceberg.
func openTableOutput(context.Context, config.Config, func(string) string, time.Duration) (publish.Output, error) {
	return publish.Output{}, errNoIceberg
}
