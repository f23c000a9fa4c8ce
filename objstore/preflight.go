package objstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// probePrefix starts the name of Preflight's probe object, in the output's
// prefix; the leading dot hides it from dataset readers.
const probePrefix = ".databrew-probe-"

// preflightTimeout bounds Preflight when the caller's context does not end
// sooner: Google's client retries a refused connection until its context
// ends. A variable, so tests can shorten it.
var preflightTimeout = 2 * time.Minute

// errPreflightTimeout is the cause of Preflight's own deadline.
var errPreflightTimeout = errors.New("preflight timed out")

// cleanupTimeout bounds the requests that undo something (a probe, an
// aborted part) after the caller's context was cancelled.
const cleanupTimeout = 30 * time.Second

// AbortStaleProbes aborts the multipart uploads of Preflight's probes
// that a killed process left under the output, those started longer ago
// than a preflight may last, so a probe another process is making right
// now is left alone. Only a probe's own name counts (probePrefix and 16
// hex digits, directly under the output's prefix): an upload of another
// name is left alone. It returns how many it aborted; only S3 has uploads.
func (t *Target) AbortStaleProbes(ctx context.Context, now time.Time) (int, error) {
	return t.AbortProbes(ctx, now.Add(-preflightTimeout))
}

// AbortProbes aborts the multipart uploads of Preflight's probes started
// before before: a caller that knows no other process may be in a
// preflight under the output now (a whole-config run holding its storage
// path) aborts those a killed process left at once, whatever their age.
func (t *Target) AbortProbes(ctx context.Context, before time.Time) (int, error) {
	if t.s3 == nil {
		return 0, nil
	}
	ups, err := t.uploads(ctx, t.Key(probePrefix))
	if err != nil {
		return 0, fmt.Errorf("output %s: list probe uploads: %w", t.url, err)
	}
	n := 0
	for _, u := range ups {
		if !isProbe(strings.TrimPrefix(u.key, t.prefix)) || u.initiated.IsZero() || !u.initiated.Before(before) {
			continue
		}
		if err := t.abortUpload(ctx, u.key, u.id); err != nil {
			return n, fmt.Errorf("output %s: abort probe upload %q: %w", t.url, u.key, err)
		}
		n++
	}
	return n, nil
}

// probeName is the name of a new probe object: probePrefix and 16 hex
// digits.
func probeName() string {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	return probePrefix + hex.EncodeToString(rnd[:])
}

// isProbe reports whether rel, a key relative to the output's prefix, is
// a name probeName gives.
func isProbe(rel string) bool {
	digits, ok := strings.CutPrefix(rel, probePrefix)
	if !ok || len(digits) != 16 {
		return false
	}
	_, err := hex.DecodeString(digits)
	return err == nil && strings.ToLower(digits) == digits
}

// Preflight proves the output usable before any crawling: the bucket
// exists and can be listed under the prefix, and the credentials may write
// there. It writes a small probe object create-only under the prefix,
// checks that a second create-only write of it is refused (a store that
// ignores If-None-Match cannot publish exactly once), and on S3 also
// starts a multipart upload of the probe, checks that completing it
// create-only is refused too, and aborts it. It deletes the probe; nothing
// is left behind, even when a step fails.
//
// When the store does not answer within two minutes (or the context's
// deadline, if sooner, ends it), or a request of it does not end within
// the call timeout (Options.CallTimeout), that is ErrUnreachable too.
// A failure is an *UnusableError (wrapping ErrUnusable and its kind:
// ErrNoBucket, ErrCredentials, ErrDenied, ErrUnreachable,
// ErrNotCreateOnly, ErrOther) whose message names the output; a
// cancelled context is returned as such.
func (t *Target) Preflight(ctx context.Context) (err error) {
	ctx, cancel := context.WithTimeoutCause(ctx, preflightTimeout, errPreflightTimeout)
	defer cancel()
	// Listing under the prefix, rather than the bucket's root as
	// blob.Bucket.IsAccessible does, also works for credentials allowed
	// only under the prefix.
	err = callErr(ctx, t, func(ctx context.Context) error {
		_, _, err := t.bucket.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{Prefix: t.prefix})
		return err
	})
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return &UnusableError{URL: t.url, Kind: ErrNoBucket, Reason: fmt.Sprintf("bucket %q does not exist", t.name)}
		}
		return t.unusable(ctx, "list the bucket", err)
	}

	probe := t.Key(probeName())
	data := []byte("databrew-stage preflight probe; safe to delete\n")
	created, err := t.PutIfAbsent(ctx, probe, data)
	if err != nil {
		return t.unusable(ctx, "write a probe object", err)
	}
	if !created {
		// The probe's name is new: the object is this very write, whose
		// answer was lost and whose retry was refused, unless it holds
		// something else.
		if got, rerr := t.Read(ctx, probe); rerr != nil || !bytes.Equal(got, data) {
			return &UnusableError{URL: t.url, Kind: ErrOther, Reason: fmt.Sprintf("the probe object %q already exists", probe), Err: rerr}
		}
	}
	defer func() {
		if derr := t.removeProbe(ctx, probe); derr != nil && err == nil {
			err = t.unusable(ctx, "delete the probe object", derr)
		}
	}()

	again, err := t.PutIfAbsent(ctx, probe, []byte("overwritten\n"))
	if err != nil {
		return t.unusable(ctx, "write the probe object again, create-only", err)
	}
	if again {
		return &UnusableError{URL: t.url, Kind: ErrNotCreateOnly,
			Reason: "the store overwrote an object written create-only (If-None-Match: *), so it cannot publish exactly once"}
	}
	if t.s3 != nil {
		if err := t.probeMultipart(ctx, probe); err != nil {
			return err
		}
	}
	return nil
}

// probeMultipart starts a multipart upload on the existing probe, uploads
// one small part, checks that completing it create-only is refused, and
// aborts it; this exercises every multipart permission the export needs.
func (t *Target) probeMultipart(ctx context.Context, probe string) error {
	if _, err := t.ListUploads(ctx, probe); err != nil {
		return t.unusable(ctx, "list multipart uploads", err)
	}
	id, err := t.createUpload(ctx, probe)
	if err != nil {
		return t.unusable(ctx, "start a multipart upload", err)
	}
	aborted := false
	defer func() {
		if !aborted {
			cctx, cancel := cleanupContext(ctx)
			defer cancel()
			_ = t.abortUpload(cctx, probe, id)
		}
	}()
	if _, err := t.uploadPart(ctx, probe, id, 1, []byte("probe")); err != nil {
		return t.unusable(ctx, "upload a part", err)
	}
	parts, err := t.listParts(ctx, probe, id)
	if err != nil {
		return t.unusable(ctx, "list the parts of an upload", err)
	}
	err = t.completeUpload(ctx, probe, id, parts)
	switch {
	case err == nil:
		return &UnusableError{URL: t.url, Kind: ErrNotCreateOnly,
			Reason: "the store completed a multipart upload over an existing object despite If-None-Match: *, so it cannot publish exactly once"}
	case !isPreconditionFailed(err):
		return t.unusable(ctx, "complete a multipart upload create-only", err)
	}
	aborted = true
	if err := t.abortUpload(ctx, probe, id); err != nil {
		return t.unusable(ctx, "abort a multipart upload", err)
	}
	return nil
}

// removeProbe deletes the probe object, even after ctx was cancelled.
func (t *Target) removeProbe(ctx context.Context, probe string) error {
	cctx, cancel := cleanupContext(ctx)
	defer cancel()
	err := t.delete(cctx, probe)
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return err
	}
	return nil
}

// cleanupContext is ctx without its cancellation, bounded by
// cleanupTimeout: undoing must happen even when the run was interrupted.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}
