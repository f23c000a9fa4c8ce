package metrics

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/databrew/databrew-stage/verdict"
)

// readPrevious parses the textfile at path, as an earlier invocation wrote
// it, into its metric families by name. A missing file holds none.
func readPrevious(path string) (map[string]*dto.MetricFamily, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the previous metrics: %w", err)
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(f)
	if err != nil {
		return nil, fmt.Errorf("read the previous metrics in %s (remove the file to start it over): %w", path, err)
	}
	return families, nil
}

// carryOver sets the values of previous that this invocation's reports do
// not replace: every metric of a config, or a config's shard, not run this
// time, and the last success of one none of whose runs this time moved it.
// A whole run and each shard of a config are apart: a shard run keeps the
// whole run's metrics, and a commit the shards'. Values of metrics this
// version does not write, or writes with other labels, and samples without
// a config label are dropped.
func (g *gauges) carryOver(previous map[string]*dto.MetricFamily, reports []verdict.RunReport) {
	ran, movedLastSuccess := map[runKey]bool{}, map[runKey]bool{}
	for _, rep := range reports {
		ran[keyOf(rep)] = true
		if movesLastSuccess(rep) {
			movedLastSuccess[keyOf(rep)] = true
		}
	}
	for name, family := range previous {
		vec, known := g.byName[name]
		if !known || family.GetType() != dto.MetricType_GAUGE {
			continue
		}
		for _, sample := range family.GetMetric() {
			labels := labelsOf(sample)
			config, hasConfig := labels[configLabel]
			k := runKey{config: config, shard: labels[shardLabel]}
			keep := hasConfig && (!ran[k] || (name == lastSuccessTimeName && !movedLastSuccess[k]))
			if !keep {
				continue
			}
			target := vec.whole
			if k.shard != "" {
				target = vec.shard
			} else {
				delete(labels, shardLabel) // shard="" is no shard
			}
			if gauge, err := target.GetMetricWith(labels); err == nil {
				gauge.Set(sample.GetGauge().GetValue())
			}
		}
	}
}

// labelsOf returns the labels of sample by name.
func labelsOf(sample *dto.Metric) map[string]string {
	labels := make(map[string]string, len(sample.GetLabel()))
	for _, pair := range sample.GetLabel() {
		labels[pair.GetName()] = pair.GetValue()
	}
	return labels
}
