package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// ChunkSize is the size of the chunks a Part uploads on S3, and so the
// memory one open Part holds. S3 takes parts of 5 MiB at least, except
// the last, and at most 10,000 of them: a part file may be 78 GiB.
const ChunkSize = 8 << 20

// maxChunks is S3's limit on the parts of one upload.
const maxChunks = 10000

// contentType is the type every part object is stored with.
const contentType = "application/octet-stream"

// PartWriter is one part file being written to its final key: bytes go in
// with Write, Finish ends the file, Abort undoes it. It is the method set
// the export's part writers share, on local disk and in object storage.
type PartWriter interface {
	io.Writer
	// Finish ends the file. On S3 it uploads the last chunk and leaves
	// the multipart upload uncompleted (invisible until CompletePart);
	// elsewhere the object exists once Finish returns.
	Finish() error
	// Abort undoes the part: on S3 it aborts the multipart upload,
	// elsewhere it deletes the object or abandons its writing.
	Abort() error
}

// part states.
const (
	partOpen = iota
	partFinished
	partAborted
)

// Part is a part object being written to its final key. On S3 it is a
// multipart upload, fed in chunks of ChunkSize and left uncompleted by
// Finish; elsewhere it is a create-only blob writer. It never overwrites
// an existing object. A Part is not safe for concurrent use; its requests
// use the context it was created with, except Abort's, which run even
// after that context is cancelled.
type Part struct {
	t     *Target
	ctx   context.Context
	key   string
	size  int64
	state int
	err   error // the first write error; every later Write returns it

	// S3
	uploadID string
	buf      []byte // the chunk being filled; nil until the first Write
	next     int32  // the next part number

	// other stores: the writer, its context and what cancels it (see
	// watch)
	w      *blob.Writer
	wctx   context.Context
	cancel context.CancelCauseFunc
}

var _ PartWriter = (*Part)(nil)

// CreatePart starts a part object at key. It fails with an error wrapping
// ErrExists when an object is there already. On S3 it starts the
// multipart upload at once, so the part is found by ListUploads (and
// aborted by AbortUploads) from now on.
func (t *Target) CreatePart(ctx context.Context, key string) (*Part, error) {
	if err := t.checkKey(key); err != nil {
		return nil, err
	}
	if _, exists, err := t.Stat(ctx, key); err != nil {
		return nil, err
	} else if exists {
		return nil, fmt.Errorf("output %s: create part %q: %w", t.url, key, ErrExists)
	}
	p := &Part{t: t, ctx: ctx, key: key, next: 1}
	if t.s3 != nil {
		id, err := t.createUpload(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("output %s: create part %q: start multipart upload: %w", t.url, key, err)
		}
		p.uploadID = id
		return p, nil
	}
	wctx, cancel := context.WithCancelCause(ctx)
	w, err := t.bucket.NewWriter(wctx, key, &blob.WriterOptions{
		IfNotExist:     true,
		ContentType:    contentType,
		BufferSize:     ChunkSize,
		MaxConcurrency: 1,
	})
	if err != nil {
		cancel(nil)
		return nil, fmt.Errorf("output %s: create part %q: %w", t.url, key, err)
	}
	p.w, p.wctx, p.cancel = w, wctx, cancel
	return p, nil
}

// UploadID is the id of the part's multipart upload on S3, "" elsewhere;
// CompletePart takes it.
func (p *Part) UploadID() string { return p.uploadID }

// Key is the part's full key.
func (p *Part) Key() string { return p.key }

// Size is the number of bytes written so far.
func (p *Part) Size() int64 { return p.size }

// Write appends b to the part. On S3 it uploads a chunk each time
// ChunkSize bytes are buffered and more follow, so the last chunk is never
// empty.
func (p *Part) Write(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	if p.state != partOpen {
		return 0, fmt.Errorf("output %s: write to part %q after Finish or Abort", p.t.url, p.key)
	}
	if p.w != nil {
		stop := p.watch()
		n, err := p.w.Write(b)
		stop()
		err = timedOut(p.wctx, err)
		p.size += int64(n)
		if err != nil {
			p.err = fmt.Errorf("output %s: write part %q: %w", p.t.url, p.key, err)
		}
		return n, p.err
	}
	written := 0
	for len(b) > 0 {
		if len(p.buf) == ChunkSize {
			if err := p.flush(); err != nil {
				p.err = err
				return written, err
			}
		}
		if p.buf == nil {
			p.buf = make([]byte, 0, ChunkSize)
		}
		n := min(len(b), ChunkSize-len(p.buf))
		p.buf = append(p.buf, b[:n]...)
		b = b[n:]
		written += n
		p.size += int64(n)
	}
	return written, nil
}

// flush uploads the buffered chunk as the next part of the upload.
func (p *Part) flush() error {
	if p.next > maxChunks {
		return fmt.Errorf("output %s: part %q: more than %d chunks of %d bytes", p.t.url, p.key, maxChunks, ChunkSize)
	}
	if _, err := p.t.uploadPart(p.ctx, p.key, p.uploadID, p.next, p.buf); err != nil {
		return fmt.Errorf("output %s: part %q: upload chunk %d: %w", p.t.url, p.key, p.next, err)
	}
	p.next++
	p.buf = p.buf[:0]
	return nil
}

// Finish ends the part. On S3 it uploads the last chunk (an empty one for
// an empty part) and leaves the upload uncompleted: CompletePart makes it
// visible. Elsewhere it closes the writer, so the object exists, or fails
// with an error wrapping ErrExists if another object took its key.
func (p *Part) Finish() error {
	if p.err != nil {
		return p.err
	}
	if p.state != partOpen {
		return fmt.Errorf("output %s: finish part %q after Finish or Abort", p.t.url, p.key)
	}
	if p.w != nil {
		stop := p.watch()
		err := timedOut(p.wctx, p.w.Close())
		stop()
		p.cancel(nil)
		if err != nil {
			p.err = fmt.Errorf("output %s: finish part %q: %w", p.t.url, p.key, wrapExists(err))
			p.state = partAborted // the object was not created
			return p.err
		}
		p.state = partFinished
		return nil
	}
	if len(p.buf) > 0 || p.next == 1 {
		if err := p.flush(); err != nil {
			p.err = err
			return err
		}
	}
	p.buf = nil
	p.state = partFinished
	return nil
}

// Abort undoes the part, whether open or finished: on S3 it aborts the
// multipart upload; elsewhere it abandons the writing, or deletes the
// object Finish created. It runs even after the Part's context was
// cancelled (for at most half a minute), may be called more than once,
// and an upload or object already gone is no error. When the store did
// not answer its last request (Target.Unanswered), it leaves the store
// alone: the error wraps ErrTimeout, and the next reconcile undoes the
// part.
func (p *Part) Abort() error {
	if p.state == partAborted {
		return nil
	}
	prev := p.state
	p.state = partAborted
	p.buf = nil
	ctx, cancel := cleanupContext(p.ctx)
	defer cancel()
	if p.w != nil && prev == partOpen {
		p.cancel(nil) // gocloud abandons a write whose context is cancelled
		_ = p.w.Close()
		return nil
	}
	if p.t.Unanswered() {
		return p.t.errLeft("abort part", p.key)
	}
	if p.w != nil {
		if err := p.t.delete(ctx, p.key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return fmt.Errorf("output %s: abort part %q: %w", p.t.url, p.key, err)
		}
		return nil
	}
	if err := p.t.abortUpload(ctx, p.key, p.uploadID); err != nil {
		return fmt.Errorf("output %s: abort part %q: %w", p.t.url, p.key, err)
	}
	return nil
}

// watch bounds one call of a blob writer (Write, which may upload a
// block, or Close) by the call timeout, as call bounds a request: when
// the call has not returned by then, the writer's context is cancelled,
// its cause the timeout, which ends the writing for good. stop ends the
// watch.
func (p *Part) watch() (stop func()) {
	te := &timeoutError{store: p.t.storeName(), limit: p.t.callTimeout}
	timer := time.AfterFunc(p.t.callTimeout, func() { p.cancel(te) })
	return func() { timer.Stop() }
}

// wrapExists makes a refused create-only write wrap ErrExists.
func wrapExists(err error) error {
	if gcerrors.Code(err) == gcerrors.FailedPrecondition || isPreconditionFailed(err) {
		return fmt.Errorf("%w: %w", ErrExists, err)
	}
	return err
}

// Parts writes the part files of one run folder, runPrefix, for the
// export's writer: it has the method set of the sink's part-file store.
// Its requests use the context it was made with, except Remove's.
type Parts struct {
	t      *Target
	ctx    context.Context
	prefix string

	mu   sync.Mutex
	open map[string]*Part // parts created here, by name, not yet removed
}

// Parts returns the part-file store of the run folder runPrefix, a full
// key prefix ending in "/" such as Key("dt=2024-05-01/run=R/").
func (t *Target) Parts(ctx context.Context, runPrefix string) *Parts {
	return &Parts{t: t, ctx: ctx, prefix: runPrefix, open: map[string]*Part{}}
}

// Create starts the part file name (such as "part-00000.parquet") at
// runPrefix+name; see CreatePart.
func (ps *Parts) Create(name string) (PartWriter, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("output %s: %w", ps.t.url, err)
	}
	p, err := ps.t.CreatePart(ps.ctx, ps.prefix+name)
	if err != nil {
		return nil, err
	}
	ps.mu.Lock()
	ps.open[name] = p
	ps.mu.Unlock()
	return p, nil
}

// Remove undoes the part file name: it aborts the Part Create returned, if
// any, every multipart upload of its key, and deletes its object. A part
// that is not there is no error. It runs even after the context was
// cancelled (for at most half a minute), so an interrupted run still
// cleans up; but not while the store does not answer (see Part.Abort).
func (ps *Parts) Remove(name string) error {
	if err := checkName(name); err != nil {
		return fmt.Errorf("output %s: %w", ps.t.url, err)
	}
	ps.mu.Lock()
	p := ps.open[name]
	delete(ps.open, name)
	ps.mu.Unlock()
	var errs []error
	if p != nil {
		errs = append(errs, p.Abort())
	}
	if ps.t.Unanswered() {
		return ps.t.errLeft("remove part", ps.prefix+name)
	}
	ctx, cancel := cleanupContext(ps.ctx)
	defer cancel()
	errs = append(errs, ps.t.removeKey(ctx, ps.prefix+name))
	return errors.Join(errs...)
}

// UploadIDs gives the multipart upload id of every part created here and
// not removed, by name (S3 only; empty elsewhere), for the state to record
// before the commit completes them.
func (ps *Parts) UploadIDs() map[string]string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ids := map[string]string{}
	for name, p := range ps.open {
		if p.uploadID != "" {
			ids[name] = p.uploadID
		}
	}
	return ids
}

// Sync does nothing: an object store's writes are durable when they
// return.
func (ps *Parts) Sync() error { return nil }

// checkName admits a file name without folders.
func checkName(name string) error {
	if name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("part name %q: want a file name without /", name)
	}
	return nil
}
