package objstore

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultCallTimeout is the time a request to the store may take when
// Options.CallTimeout is not set.
const DefaultCallTimeout = time.Minute

// ErrTimeout is wrapped by the error of a request to the store that did
// not end within the Target's call timeout (Options.CallTimeout): an
// endpoint that accepts connections and never answers, or stops in the
// middle of an answer. The error's message names the endpoint and the
// limit.
var ErrTimeout = errors.New("no answer in time")

// timeoutError is the cause of a request's own deadline.
type timeoutError struct {
	store string
	limit time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("%s did not answer within %v", e.store, e.limit)
}

func (e *timeoutError) Unwrap() error { return ErrTimeout }

// callContext is the context of one request to the store: ctx, which
// still cancels it, ended after the call timeout with a *timeoutError as
// its cause.
func (t *Target) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, t.callTimeout, &timeoutError{store: t.storeName(), limit: t.callTimeout})
}

// timedOut is err, the error of a request made with cctx, saying so when
// the request's own deadline ended it (and not ctx, the caller's).
func timedOut(cctx context.Context, err error) error {
	var te *timeoutError
	if err == nil || !errors.As(context.Cause(cctx), &te) || errors.Is(err, ErrTimeout) {
		return err
	}
	return fmt.Errorf("%w: %w", te, err)
}

// call makes one request to the store, fn, under the call timeout: every
// request the Target makes, reading an answer's body included, goes
// through it, so none waits for an endpoint for good.
func call[T any](ctx context.Context, t *Target, fn func(ctx context.Context) (T, error)) (T, error) {
	cctx, cancel := t.callContext(ctx)
	defer cancel()
	v, err := fn(cctx)
	err = timedOut(cctx, err)
	switch {
	case errors.Is(err, ErrTimeout):
		t.unanswered.Store(true)
	case ctx.Err() == nil:
		t.unanswered.Store(false) // the store answered, if only an error
	}
	return v, err
}

// Unanswered reports whether the last request to the store that ended
// got no answer within the call timeout (none was answered since). What
// undoes a failed write (Part.Abort, Parts.Remove) then leaves the store
// alone, to the next reconcile, rather than wait for it again: their
// errors wrap ErrTimeout.
func (t *Target) Unanswered() bool { return t.unanswered.Load() }

// errLeft is the error of an undo that Unanswered skipped.
func (t *Target) errLeft(what, key string) error {
	return fmt.Errorf("output %s: %s %q left for the next reconcile: %s did not answer the last request: %w",
		t.url, what, key, t.storeName(), ErrTimeout)
}

// callErr is call for a request that gives only an error.
func callErr(ctx context.Context, t *Target, fn func(ctx context.Context) error) error {
	_, err := call(ctx, t, func(ctx context.Context) (struct{}, error) { return struct{}{}, fn(ctx) })
	return err
}

// storeName names the store in errors: the endpoint the URL gives, or
// the service.
func (t *Target) storeName() string {
	if e := t.endpoint(); e != "" {
		return "the endpoint " + e
	}
	if t.scheme == "azblob" {
		if d := t.query().Get("domain"); d != "" {
			return "the endpoint " + d
		}
	}
	switch t.scheme {
	case "s3":
		return "the S3 endpoint"
	case "azblob":
		return "Azure Blob Storage"
	case "gs":
		return "Google Cloud Storage"
	}
	return "the store"
}
