package stage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/databrew/databrew-stage/crawl"
)

// DefaultExportTimeout is the time the export of a run with a deadline
// gets after it (Options.ExportTimeout).
const DefaultExportTimeout = 15 * time.Minute

// crawlContext is the context of a run's setup and crawl: ctx, ended at
// opts.Deadline when one is set (its cause context.DeadlineExceeded, the
// verdict's "Deadline reached").
func crawlContext(ctx context.Context, opts Options) (context.Context, context.CancelFunc) {
	if opts.Deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, opts.Deadline)
}

// exportContext is the context of the export that follows a crawl which
// ended at crawlEnd: ctx, which a signal still ends, and, when the run has
// a deadline, a time limit of its own — ExportTimeout after the deadline,
// or after the crawl's end when that came later. The limit's cause is an
// ExportTimeoutError.
func exportContext(ctx context.Context, opts Options, crawlEnd time.Time) (context.Context, context.CancelFunc) {
	if opts.Deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	limit := opts.ExportTimeout
	if limit <= 0 {
		limit = DefaultExportTimeout
	}
	from := opts.Deadline
	if crawlEnd.After(from) {
		from = crawlEnd
	}
	return context.WithDeadlineCause(ctx, from.Add(limit), &ExportTimeoutError{Limit: limit})
}

// ExportTimeoutError is the cause of an export that its time limit
// (Options.ExportTimeout) abandoned: nothing was published, and the
// items stay pending for the next run.
type ExportTimeoutError struct {
	// Limit is the time the export had after the deadline.
	Limit time.Duration
}

// Error says the export ran out of its time.
func (e *ExportTimeoutError) Error() string {
	return fmt.Sprintf("the export did not finish within its time limit (%v after the deadline)", e.Limit)
}

// exportInterruptedDetail is the detail of a run whose export cause
// abandoned before it was recorded: a signal, the caller's context, or
// the export's own time limit (after the crawl's detail, which says why
// the crawl stopped).
func exportInterruptedDetail(crawlDetail string, cause error) string {
	const rest = ": nothing is published, its items stay pending for the next run"
	if te := (*ExportTimeoutError)(nil); errors.As(cause, &te) {
		if crawlDetail != "" {
			return crawlDetail + "; " + te.Error() + rest
		}
		return te.Error() + rest
	}
	return crawl.InterruptedDetail(cause) + " during the export" + rest
}
