package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/lineage"
	"github.com/databrew/databrew-stage/verdict"
)

// lineageSetup is the run command's OpenLineage setup: --lineage-file, and
// the emitter that it and OPENLINEAGE_URL make, built at the first run.
// Lineage never changes a run's outcome or the exit code: an event that
// is not delivered is logged as a warning, and each run whose events did
// not all arrive gets a line on stderr naming where they did not go.
type lineageSetup struct {
	file string

	built     bool
	emitter   *lineage.Emitter
	namespace string
}

// lineageRun follows one config's run: its START went out, its end event
// is next. A nil lineageRun does nothing.
type lineageRun struct {
	emitter *lineage.Emitter
	tracker *lineage.Tracker
	config  string
	logger  *slog.Logger
	stderr  io.Writer
	// undelivered counts the run's events each transport (by
	// describeTransport) missed; order lists those transports as they
	// first missed one, lastErr holds each one's latest error.
	undelivered map[string]int
	order       []string
	lastErr     map[string]error
}

// start sends the START event of cfg's run and returns the run to finish;
// nil when lineage is off or the run cannot be described.
func (l *lineageSetup) start(ctx context.Context, env Env, logger *slog.Logger, cfg config.Config) *lineageRun {
	l.build(env)
	if l.emitter == nil {
		return nil
	}
	tracker, err := lineage.NewTracker(cfg, l.namespace)
	if err != nil {
		fmt.Fprintf(env.Stderr, "databrew-stage run: openlineage: %v: no events for this run\n", err)
		return nil
	}
	r := &lineageRun{emitter: l.emitter, tracker: tracker, config: cfg.Name, logger: logger, stderr: env.Stderr,
		undelivered: map[string]int{}, lastErr: map[string]error{}}
	r.emit(ctx, tracker.Start(time.Now()))
	return r
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
		fmt.Fprintf(env.Stderr, "databrew-stage run: openlineage: %v: events are not sent over HTTP\n", err)
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

// finish sends the run's COMPLETE or FAIL event, then says on stderr
// which of its events did not arrive where.
func (r *lineageRun) finish(ctx context.Context, rep verdict.RunReport) {
	if r == nil {
		return
	}
	r.emit(ctx, r.tracker.End(rep))
	for _, t := range r.order {
		fmt.Fprintf(r.stderr, "databrew-stage run: openlineage: %d of 2 events for %s not delivered to %s: %v\n",
			r.undelivered[t], r.config, t, r.lastErr[t])
	}
}

// emit sends one event. It does not heed the run's cancellation: the end
// event of a run that a signal or the deadline stopped still goes out, and
// each transport bounds its own wait (5 s over HTTP).
func (r *lineageRun) emit(ctx context.Context, event lineage.RunEvent) {
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
