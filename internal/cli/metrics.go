package cli

import (
	"github.com/databrew/databrew-stage/internal/metrics"
	"github.com/databrew/databrew-stage/verdict"
)

// writeMetricsFile writes the verdicts of this invocation to the
// --metrics-file textfile for node-exporter's textfile collector,
// atomically; failed runs and runs that never started are in it too.
func writeMetricsFile(path string, reports []verdict.RunReport) error {
	return metrics.WriteTextfile(path, reports)
}
