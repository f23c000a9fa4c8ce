package stage

import (
	"context"
	"log/slog"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/publish"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
	"github.com/databrew/databrew-stage/verdict"
)

// Reasons an export section gives when nothing was published.
const (
	reasonFailed   = "the run failed: nothing is published, its items stay pending for the next published run"
	reasonWithheld = `publish_when = "success" withholds a partial run: its items stay pending`
	reasonNothing  = publish.ReasonNothing
)

// exporter is a run's side of the publish protocol (package publish): it
// decides whether the run publishes, and hands its pending versions to
// the publisher — as a run of the whole config, or as a shard's attempt.
type exporter struct {
	cfg config.Config
	db  *state.DB
	pub *publish.Publisher
	// attempt is the shard's attempt; nil for a run of the whole config.
	attempt *publish.Attempt
	// tablePub publishes into an Iceberg table, table, instead of pub.
	tablePub *publish.TablePublisher
	table    *icebergTable
	// partitionDate is Options.PartitionDate.
	partitionDate time.Time
}

// newExporter returns the exporter of cfg into out; it publishes once
// given the run's state (useState).
func newExporter(cfg config.Config, out publish.Output, opts Options, log *slog.Logger) *exporter {
	p := &publish.Publisher{Out: out, Log: log, AfterStep: opts.AfterPublishStep, Now: clockOf(opts).Now,
		Export: publish.Export{Config: cfg.Name, Schema: sink.SchemaFor(cfg.Extract.Fields, cfg.Export.Tombstones),
			Format: sink.Format(cfg.Export.Format), RowGroupRows: cfg.Export.RowGroupRows, MaxFileRows: cfg.Export.MaxFileRows}}
	return &exporter{cfg: cfg, pub: p, partitionDate: opts.PartitionDate}
}

// useState gives the exporter the run's state, whose pending versions it
// publishes and which records each publish.
func (x *exporter) useState(db *state.DB) {
	x.db = db
	if x.tablePub != nil {
		x.tablePub.Ledger = db
		return
	}
	x.pub.Ledger = db
}

// reconcile resolves the publishes a crash interrupted, before the
// crawl (see publish.Publisher.Reconcile and publish.Attempt.Settle).
func (x *exporter) reconcile(ctx context.Context) error {
	switch {
	case x.tablePub != nil:
		return x.tablePub.Reconcile(ctx)
	case x.attempt != nil:
		return x.attempt.Settle(ctx)
	}
	return x.pub.Reconcile(ctx)
}

// partitionDay is the day whose dt= partition a run publishes into.
func (x *exporter) partitionDay(r *verdict.RunReport) time.Time {
	if !x.partitionDate.IsZero() {
		return x.partitionDate
	}
	return r.StartedAt
}

// decide says whether the run publishes, and if not, why.
func (x *exporter) decide(r *verdict.RunReport) (publish bool, reason string) {
	switch {
	case r.Outcome == verdict.OutcomeFailed:
		return false, reasonFailed
	case r.Outcome == verdict.OutcomePartial && x.cfg.Export.PublishWhen == config.PublishWhenSuccess:
		return false, reasonWithheld
	}
	return true, ""
}

// publish exports the pending versions and fills r.Export. The report's
// JSON goes into the run folder as _verdict.json, so it must be final
// except for Export, which publish sets.
func (x *exporter) publish(ctx context.Context, r *verdict.RunReport) error {
	r.Export = verdict.Export{Files: []string{}}
	ok, reason := x.decide(r)
	if !ok {
		r.Export.Reason = reason
		return nil
	}
	pending, err := x.db.PendingSummary()
	if err != nil {
		return err
	}
	if pending.Count == 0 {
		r.Export.Reason = reasonNothing
		return nil
	}
	switch {
	case x.tablePub != nil:
		return x.tablePub.Publish(ctx, r, pending.MaxSeq)
	case x.attempt != nil:
		return x.attempt.Stage(ctx, r, pending.MaxSeq)
	}
	return x.pub.Publish(ctx, r, x.partitionDay(r), pending.MaxSeq)
}

// writeVerdict writes the run's verdict b where the output keeps it: the
// output's _verdict.json, or for a shard its manifest for the commit.
func (x *exporter) writeVerdict(ctx context.Context, b []byte) error {
	if x.tablePub != nil {
		return nil // a table has no file beside its data: .last_run.json holds it
	}
	if x.attempt != nil {
		return x.attempt.PutManifest(ctx, b)
	}
	return x.pub.PutVerdict(ctx, b)
}

// encodeReport is the verdict JSON as every file holds it.
func encodeReport(r verdict.RunReport) ([]byte, error) { return publish.EncodeVerdict(r) }
