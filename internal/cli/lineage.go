package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/lineage"
	"github.com/databrew/databrew-stage/stage"
	"github.com/databrew/databrew-stage/verdict"
)

// lineageSetup is the OpenLineage setup of run and commit: --lineage-file,
// and the emitter that it and OPENLINEAGE_URL make, built at the first
// run. Lineage never changes a run's outcome or the exit code: an event
// that is not delivered is logged as a warning, and each run whose events
// did not all arrive gets a line on stderr naming where they did not go.
//
// A whole run sends START and COMPLETE (or FAIL) under a run id of its
// own. A logical run of shards is one OpenLineage run whose id every shard
// and the commit derive from the run id they share (lineage.LogicalRunID):
// each shard sends START, then RUNNING when it ends, naming its shard; the
// commit sends the one COMPLETE or FAIL.
type lineageSetup struct {
	file string
	// cmd names the command in the messages on stderr: run or commit.
	cmd string

	built     bool
	emitter   *lineage.Emitter
	namespace string
}

// lineageRun follows one config's run: its START went out, its end event
// is next. A nil lineageRun does nothing.
type lineageRun struct {
	emitter *lineage.Emitter
	tracker *lineage.Tracker
	cmd     string
	config  string
	logger  *slog.Logger
	stderr  io.Writer
	// sent counts the run's events; undelivered counts those each
	// transport (by describeTransport) missed; order lists those
	// transports as they first missed one, lastErr holds each one's
	// latest error.
	sent        int
	undelivered map[string]int
	order       []string
	lastErr     map[string]error
}

// start sends the START event of cfg's run, of shard's when it is a
// shard's, and returns the run to finish; nil when lineage is off or the
// run cannot be described.
func (l *lineageSetup) start(ctx context.Context, env Env, logger *slog.Logger, cfg config.Config, shard *stage.Shard) *lineageRun {
	var r *lineageRun
	if shard == nil {
		r = l.track(env, logger, cfg, "", "")
	} else {
		r = l.track(env, logger, cfg, shard.RunID, shard.Name())
	}
	if r != nil {
		r.emit(ctx, r.tracker.Start(time.Now()))
	}
	return r
}

// commit sends the end event of the logical run runID of cfg, from the
// verdict its commit combined: COMPLETE, or FAIL when it fails.
func (l *lineageSetup) commit(ctx context.Context, env Env, logger *slog.Logger, cfg config.Config, runID string, rep verdict.RunReport) {
	l.track(env, logger, cfg, runID, "").finish(ctx, rep)
}

// track returns the run to report cfg's events of: a whole run when
// runID is empty, else the logical run runID, as its shard when shard is
// not empty, as its commit when it is; nil when lineage is off or the run
// cannot be described.
func (l *lineageSetup) track(env Env, logger *slog.Logger, cfg config.Config, runID, shard string) *lineageRun {
	l.build(env)
	if l.emitter == nil {
		return nil
	}
	var tracker *lineage.Tracker
	var err error
	if runID == "" {
		tracker, err = lineage.NewTracker(cfg, l.namespace)
	} else if tracker, err = lineage.NewLogicalRunTracker(cfg, l.namespace, runID); err == nil && shard != "" {
		tracker = tracker.Shard(shard)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "databrew-stage %s: openlineage: %v: no events for this run\n", l.cmd, err)
		return nil
	}
	return &lineageRun{emitter: l.emitter, tracker: tracker, cmd: l.cmd, config: cfg.Name, logger: logger, stderr: env.Stderr,
		undelivered: map[string]int{}, lastErr: map[string]error{}}
}

// build makes the emitter once: an HTTP transport when OPENLINEAGE_URL is
// set, a file transport with --lineage-file. A bad OPENLINEAGE_URL is
// reported and left out; the runs go on.
func (l *lineageSetup) build(env Env) {
	if l.built {
		return
	}
	l.built = true
	var transports []lineage.Transport
	switch h, err := lineage.HTTPFromEnv(env.Getenv); {
	case err != nil:
		fmt.Fprintf(env.Stderr, "databrew-stage %s: openlineage: %v: events are not sent over HTTP\n", l.cmd, err)
	case h != nil:
		transports = append(transports, h)
	}
	if l.file != "" {
		transports = append(transports, lineage.FileTransport{Path: l.file})
	}
	if len(transports) > 0 {
		l.emitter = lineage.NewEmitter(transports...)
		l.namespace = env.Getenv(lineage.EnvNamespace)
	}
}

// finish sends the run's end event (COMPLETE or FAIL; a shard's RUNNING),
// then says on stderr which of its events did not arrive where.
func (r *lineageRun) finish(ctx context.Context, rep verdict.RunReport) {
	if r == nil {
		return
	}
	r.emit(ctx, r.tracker.End(rep))
	for _, t := range r.order {
		fmt.Fprintf(r.stderr, "databrew-stage %s: openlineage: %d of %d events for %s not delivered to %s: %v\n",
			r.cmd, r.undelivered[t], r.sent, r.config, t, r.lastErr[t])
	}
}

// emit sends one event. It does not heed the run's cancellation: the end
// event of a run that a signal or the deadline stopped still goes out, and
// each transport bounds its own wait (5 s over HTTP).
func (r *lineageRun) emit(ctx context.Context, event lineage.RunEvent) {
	r.sent++
	for _, d := range r.emitter.Emit(context.WithoutCancel(ctx), event) {
		to := describeTransport(d.Transport)
		r.logger.Warn("openlineage event not delivered", "config", r.config, "event", string(d.Event), "to", to, "err", d.Err)
		if r.undelivered[to] == 0 {
			r.order = append(r.order, to)
		}
		r.undelivered[to]++
		r.lastErr[to] = d.Err
	}
}

// describeTransport names a transport as the user set it up.
func describeTransport(t lineage.Transport) string {
	if f, ok := t.(lineage.FileTransport); ok {
		return "--lineage-file " + f.Path
	}
	return t.String()
}
