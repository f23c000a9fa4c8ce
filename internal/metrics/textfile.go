package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/databrew/databrew-stage/verdict"
)

// WriteTextfile writes the metrics of reports, the verdicts of one run
// invocation (or the one verdict of a commit), to the textfile at path for
// node-exporter's textfile collector (whose files end in .prom), replacing
// it atomically. A report that names a shard is labelled with it. From the
// file already at path it keeps every metric of the configs (and shards)
// not run this time, and the last success of each whose run this time
// failed or did not start. A file at path that cannot be read or parsed is an error,
// and is left as it was.
func WriteTextfile(path string, reports []verdict.RunReport) error {
	previous, err := readPrevious(path)
	if err != nil {
		return err
	}
	registry := prometheus.NewRegistry()
	g, err := newGauges(registry)
	if err != nil {
		return fmt.Errorf("define the metrics: %w", err)
	}
	for _, rep := range reports {
		if err := g.record(rep); err != nil {
			return fmt.Errorf("metrics of config %s: %w", rep.Config, err)
		}
	}
	g.carryOver(previous, reports)
	if err := prometheus.WriteToTextfile(path, registry); err != nil {
		return fmt.Errorf("write the metrics to %s: %w", path, err)
	}
	return nil
}
