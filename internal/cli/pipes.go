package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/databrew/databrew-stage/internal/dagsterpipes"
	"github.com/databrew/databrew-stage/verdict"
)

// verdictCheck is the asset check every run reports under Dagster Pipes:
// it fails when the run failed, and a blocking check stops downstream
// assets.
const verdictCheck = "verdict"

// openPipes opens a Dagster Pipes session when Dagster launched the
// process; nil when it did not.
func openPipes(env Env) (*dagsterpipes.Session, error) {
	getenv := env.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return dagsterpipes.Open(getenv, env.Stdout, env.Stderr)
}

// pipesPartitionDate is the Dagster partition key as a date, when it is
// one (a daily partition, "2024-05-01"); zero otherwise.
func pipesPartitionDate(s *dagsterpipes.Session) time.Time {
	if s.Context.PartitionKey == nil {
		return time.Time{}
	}
	d, err := time.Parse(time.DateOnly, *s.Context.PartitionKey)
	if err != nil {
		return time.Time{}
	}
	return d
}

// pipesAssetKey is the asset a config's run materializes: the context's
// asset key named like the config, or else its only asset key when the
// stage runs one config (several configs reporting to one asset would
// report one check several times in one step); empty when there is none
// to report to.
func pipesAssetKey(s *dagsterpipes.Session, config string, configs int) string {
	keys := s.Context.AssetKeys
	for _, k := range keys {
		if k == config {
			return k
		}
	}
	if len(keys) == 1 && configs == 1 {
		return keys[0]
	}
	return ""
}

// reportToPipes reports a run: a materialization when it published, and
// the verdict check in every case. A logical run's commit reports as a
// whole run does; a shard's run reports with reportShardToPipes instead.
func reportToPipes(s *dagsterpipes.Session, rep verdict.RunReport, configs int, logger *slog.Logger) {
	if rep.Shard != "" {
		reportShardToPipes(s, rep)
		return
	}
	asset := pipesAssetKey(s, rep.Config, configs)
	if asset == "" {
		logger.Warn("dagster pipes: no asset key to report this config's run to: none is named like the config",
			"config", rep.Config, "asset_keys", strings.Join(s.Context.AssetKeys, ","))
		return
	}
	if rep.Export.Published {
		md := dagsterpipes.Metadata{
			"rows":    dagsterpipes.Int(rep.Export.Rows),
			"new":     dagsterpipes.Int(rep.Items.New),
			"changed": dagsterpipes.Int(rep.Items.Changed),
			"removed": dagsterpipes.Int(rep.Items.Removed),
			"path":    dagsterpipes.Path(rep.Export.Path),
			"run_id":  dagsterpipes.Text(rep.RunID),
			"files":   dagsterpipes.JSON(rep.Export.Files),
		}
		addTableMetadata(md, rep.Export.Table)
		s.ReportMaterialization(asset, rep.RunID, md)
	}
	s.ReportCheck(asset, verdictCheck, !rep.FailsDownstream(), dagsterpipes.SeverityError, verdictMetadata(rep))
}

// dagsterTableName is Dagster's own metadata key for the name of the
// table an asset is (TableMetadataSet's table_name).
const dagsterTableName = "dagster/table_name"

// addTableMetadata adds to a materialization's metadata the table the run
// published into, when its output is one: its name (as "table" and under
// Dagster's own key), catalog and location, and the id of the snapshot
// the run committed.
func addTableMetadata(md dagsterpipes.Metadata, t *verdict.Table) {
	if t == nil {
		return
	}
	md["table"] = dagsterpipes.Text(t.Name)
	md[dagsterTableName] = dagsterpipes.Text(t.Name)
	md["table_format"] = dagsterpipes.Text(t.Format)
	md["catalog"] = dagsterpipes.Text(t.Catalog)
	if t.Location != "" {
		md["table_location"] = dagsterpipes.Text(t.Location)
	}
	if t.SnapshotID != 0 {
		md["snapshot_id"] = dagsterpipes.Int64(t.SnapshotID)
	}
}

// shardVerdictKind is the "kind" of the custom message a shard's run
// reports under Dagster Pipes.
const shardVerdictKind = "databrew_stage.shard_verdict"

// reportShardToPipes reports the run of one shard of a logical run: no
// materialization (a shard publishes nothing; the commit does) and no
// asset check either, since the asset's verdict check is the commit's to
// report once for the logical run (a Dagster step may report a check only
// when it declares it, so a step that runs a shard would fail on it).
// Instead one custom message carries the shard's verdict: kind
// shard_verdict, config, run_id, shard, passed and the verdict check's
// metadata with the shard, the run id and the rows it staged.
func reportShardToPipes(s *dagsterpipes.Session, rep verdict.RunReport) {
	md := verdictMetadata(rep)
	md["shard"] = dagsterpipes.Text(rep.Shard)
	md["run_id"] = dagsterpipes.Text(rep.RunID)
	md["staged_rows"] = dagsterpipes.Int(stagedRows(rep.Export))
	s.ReportCustomMessage(map[string]any{
		"kind":     shardVerdictKind,
		"config":   rep.Config,
		"run_id":   rep.RunID,
		"shard":    rep.Shard,
		"passed":   !rep.FailsDownstream(),
		"metadata": md,
	})
}

// stagedRows is the rows a shard's run staged for the commit.
func stagedRows(e verdict.Export) int {
	if !e.Staged {
		return 0
	}
	return e.Rows
}

// verdictMetadata is the metadata of the verdict check of rep's run.
func verdictMetadata(rep verdict.RunReport) dagsterpipes.Metadata {
	gaps := make([]string, 0, len(rep.Gaps))
	for _, g := range rep.Gaps {
		gaps = append(gaps, g.URL+": "+g.Reason)
	}
	return dagsterpipes.Metadata{
		"export_failed": dagsterpipes.Bool(rep.Export.Failed),
		"export_reason": dagsterpipes.Text(rep.Export.Reason),
		"outcome":       dagsterpipes.Text(string(rep.Outcome)),
		"stop":          dagsterpipes.Text(string(rep.Stop)),
		"detail":        dagsterpipes.Text(rep.Detail),
		"summary":       dagsterpipes.Text(rep.Summary()),
		"coverage_gaps": dagsterpipes.Int(rep.CoverageGaps),
		"gaps":          dagsterpipes.JSON(gaps),
		"breaker_trips": dagsterpipes.Int(rep.Breaker.Trips),
	}
}

// pipesHandler passes log records on to the stderr handler and sends those
// at WARN and above (trips, pauses, probes, give-ups) to Dagster as log
// messages.
type pipesHandler struct {
	next  slog.Handler
	s     *dagsterpipes.Session
	attrs []slog.Attr
}

func (h *pipesHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.next.Enabled(ctx, l)
}

func (h *pipesHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		var b strings.Builder
		b.WriteString(r.Message)
		add := func(a slog.Attr) bool {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
			return true
		}
		for _, a := range h.attrs {
			add(a)
		}
		r.Attrs(add)
		level := "WARNING"
		if r.Level >= slog.LevelError {
			level = "ERROR"
		}
		h.s.Log(level, b.String())
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *pipesHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &pipesHandler{next: h.next.WithAttrs(attrs), s: h.s, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

func (h *pipesHandler) WithGroup(name string) slog.Handler {
	return &pipesHandler{next: h.next.WithGroup(name), s: h.s, attrs: h.attrs}
}
