// Package memstorage is an in-memory publish.Storage for tests: it passes
// the conformance suite with any consistent Caps, and can be made to fail
// on purpose (see Inject), so the publish protocol's handling of a store
// that errs, hangs or half-succeeds can be tested without one.
package memstorage

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/databrew/databrew-stage/publish"
)

// Storage is an in-memory publish.Storage. Its zero value is not usable:
// make one with New. Its methods may be called from several goroutines.
type Storage struct {
	caps publish.Caps

	mu      sync.Mutex
	objects map[string]object
	staged  map[string]*staged // by token
	writers int                // writers made, to name them
	faults  []*Injected
	calls   []Call
}

// object is what a reader sees at a key.
type object struct {
	data []byte
	// origin names the writer that created it, "" for Put and
	// PutIfAbsent, so completing or aborting that writer's part again
	// knows it.
	origin string
}

// staged is a hidden part.
type staged struct {
	key      string
	data     []byte
	finished bool
	started  time.Time
}

var _ publish.Storage = (*Storage)(nil)

// New returns an empty storage with the given capabilities. With
// HidesParts a part is kept apart until completed, as S3 or a folder keep
// it; without, it is an object once finished, as on Azure Blob Storage.
// With CompletesAtOnce (which needs HidesParts) CompleteFolder completes
// its parts in one step.
func New(caps publish.Caps) *Storage {
	return &Storage{caps: caps, objects: map[string]object{}, staged: map[string]*staged{}}
}

// Caps returns the capabilities New was given.
func (s *Storage) Caps() publish.Caps { return s.caps }

// Where names key as mem:KEY.
func (s *Storage) Where(key string) string { return "mem:" + key }

// StagePart starts a part at key; see publish.Storage.
func (s *Storage) StagePart(ctx context.Context, key string) (publish.PartWriter, error) {
	if err := publish.CheckKey(key); err != nil {
		return nil, err
	}
	half, err := s.enter(ctx, OpStagePart, key, false)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if _, ok := s.objects[key]; ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("memstorage: stage part %q: %w", key, fs.ErrExist)
	}
	s.writers++
	w := &writer{s: s, ctx: ctx, key: key, id: "w" + strconv.Itoa(s.writers)}
	if s.caps.HidesParts {
		s.staged[w.id] = &staged{key: key, started: time.Now()}
	}
	s.mu.Unlock()
	if half != nil {
		return nil, half // the part is staged, and its writer lost
	}
	return w, nil
}

// CompletePart makes a staged part the object at its key; see
// publish.Storage.
func (s *Storage) CompletePart(ctx context.Context, p publish.Part) error {
	if err := publish.CheckKey(p.Key); err != nil {
		return err
	}
	half, err := s.enter(ctx, OpCompletePart, p.Key, false)
	if err != nil {
		return err
	}
	s.mu.Lock()
	err = s.complete(p)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return half
}

// complete is CompletePart under s.mu.
func (s *Storage) complete(p publish.Part) error {
	st, ok := s.staged[p.Token]
	if !ok || st.key != p.Key {
		return s.completed(p)
	}
	if err := stagedHolds(st, p); err != nil {
		return err
	}
	if _, ok := s.objects[p.Key]; ok {
		return fmt.Errorf("memstorage: complete %q: another object holds the key: %w", p.Key, fs.ErrExist)
	}
	s.objects[p.Key] = object{data: st.data, origin: p.Token}
	delete(s.staged, p.Token)
	return nil
}

// stagedHolds checks a staged part is finished with p's size.
func stagedHolds(st *staged, p publish.Part) error {
	if !st.finished {
		return fmt.Errorf("memstorage: part %q is not finished", p.Key)
	}
	if int64(len(st.data)) != p.Size {
		return fmt.Errorf("memstorage: part %q holds %d bytes, not %d", p.Key, len(st.data), p.Size)
	}
	return nil
}

// completed is CompletePart's answer when p is not staged: nil when the
// object at its key has its size.
func (s *Storage) completed(p publish.Part) error {
	o, ok := s.objects[p.Key]
	switch {
	case ok && int64(len(o.data)) == p.Size:
		return nil
	case ok:
		return fmt.Errorf("memstorage: complete %q: an object of %d bytes, not %d, holds the key: %w", p.Key, len(o.data), p.Size, fs.ErrExist)
	default:
		return fmt.Errorf("memstorage: complete %q: no part and no object: %w", p.Key, fs.ErrNotExist)
	}
}

// CompleteFolder completes parts under folder, all in one step when
// CompletesAtOnce; see publish.Storage.
func (s *Storage) CompleteFolder(ctx context.Context, folder string, parts []publish.Part) error {
	if !s.caps.CompletesAtOnce {
		return publish.CompleteEach(ctx, s, folder, parts)
	}
	if err := publish.CheckFolder(folder, parts); err != nil {
		return err
	}
	half, err := s.enter(ctx, OpCompleteFolder, folder, false)
	if err != nil {
		return err
	}
	s.mu.Lock()
	err = s.completeFolder(folder, parts)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return half
}

// completeFolder is CompleteFolder under s.mu.
func (s *Storage) completeFolder(folder string, parts []publish.Part) error {
	if s.holdsAny(folder) {
		for _, p := range parts {
			if o, ok := s.objects[p.Key]; !ok || int64(len(o.data)) != p.Size {
				return fmt.Errorf("memstorage: complete folder %q: it holds other objects: %w", folder, fs.ErrExist)
			}
		}
		for _, p := range parts {
			delete(s.staged, p.Token)
		}
		return nil
	}
	for _, p := range parts {
		st, ok := s.staged[p.Token]
		if !ok || st.key != p.Key {
			return fmt.Errorf("memstorage: complete folder %q: part %q: no part and no object: %w", folder, p.Key, fs.ErrNotExist)
		}
		if err := stagedHolds(st, p); err != nil {
			return err
		}
	}
	for _, p := range parts {
		s.objects[p.Key] = object{data: s.staged[p.Token].data, origin: p.Token}
		delete(s.staged, p.Token)
	}
	return nil
}

// holdsAny reports whether an object's key starts with prefix.
func (s *Storage) holdsAny(prefix string) bool {
	for k := range s.objects {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// CheckPart reports whether p can still be completed, or was; see
// publish.Storage.
func (s *Storage) CheckPart(ctx context.Context, p publish.Part) error {
	if err := publish.CheckKey(p.Key); err != nil {
		return err
	}
	half, err := s.enter(ctx, OpCheckPart, p.Key, false)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.staged[p.Token]; ok && st.key == p.Key {
		if int64(len(st.data)) != p.Size {
			return fmt.Errorf("memstorage: part %q holds %d bytes, not %d", p.Key, len(st.data), p.Size)
		}
		return half
	}
	o, ok := s.objects[p.Key]
	switch {
	case !ok:
		return fmt.Errorf("memstorage: part %q: no part and no object: %w", p.Key, fs.ErrNotExist)
	case int64(len(o.data)) != p.Size:
		return fmt.Errorf("memstorage: part %q: the object holds %d bytes, not %d", p.Key, len(o.data), p.Size)
	}
	return half
}

// ListStaged lists the staged parts under prefix; see publish.Storage.
func (s *Storage) ListStaged(ctx context.Context, prefix string) ([]publish.Staged, error) {
	if err := publish.CheckPrefix(prefix); err != nil {
		return nil, err
	}
	half, err := s.enter(ctx, OpListStaged, prefix, false)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	list := s.stagedUnder(prefix)
	s.mu.Unlock()
	if half != nil {
		return nil, half
	}
	return list, nil
}

// stagedUnder lists the staged parts under prefix in key order, then by
// start, under s.mu.
func (s *Storage) stagedUnder(prefix string) []publish.Staged {
	list := []publish.Staged{}
	for token, st := range s.staged {
		if strings.HasPrefix(st.key, prefix) {
			list = append(list, publish.Staged{Key: st.key, Token: token, Started: st.started})
		}
	}
	slices.SortFunc(list, func(a, b publish.Staged) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return strings.Compare(a.Token, b.Token)
	})
	return list
}

// AbortStaged aborts the staged parts under prefix that own accepts; see
// publish.Storage.
func (s *Storage) AbortStaged(ctx context.Context, prefix string, own func(publish.Staged) bool) (int, error) {
	if err := publish.CheckPrefix(prefix); err != nil {
		return 0, err
	}
	half, err := s.enter(ctx, OpAbortStaged, prefix, false)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	list := s.stagedUnder(prefix)
	s.mu.Unlock()
	n := 0
	for _, st := range list {
		if !own(st) {
			continue
		}
		s.mu.Lock()
		if _, ok := s.staged[st.Token]; ok {
			delete(s.staged, st.Token)
			n++
		}
		s.mu.Unlock()
	}
	if half != nil {
		return 0, half
	}
	return n, nil
}

// PutIfAbsent writes data at key unless an object is there; see
// publish.Storage.
func (s *Storage) PutIfAbsent(ctx context.Context, key string, data []byte) (bool, error) {
	if err := publish.CheckKey(key); err != nil {
		return false, err
	}
	half, err := s.enter(ctx, OpPutIfAbsent, key, false)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	_, exists := s.objects[key]
	if !exists {
		s.objects[key] = object{data: bytes.Clone(data)}
	}
	s.mu.Unlock()
	if half != nil {
		return false, half
	}
	return !exists, nil
}

// Put writes data at key, replacing any object there; see
// publish.Storage.
func (s *Storage) Put(ctx context.Context, key string, data []byte) error {
	if err := publish.CheckKey(key); err != nil {
		return err
	}
	half, err := s.enter(ctx, OpPut, key, false)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.objects[key] = object{data: bytes.Clone(data)}
	s.mu.Unlock()
	return half
}

// Read returns the object at key; see publish.Storage.
func (s *Storage) Read(ctx context.Context, key string) ([]byte, error) {
	if err := publish.CheckKey(key); err != nil {
		return nil, err
	}
	half, err := s.enter(ctx, OpRead, key, false)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	o, ok := s.objects[key]
	s.mu.Unlock()
	switch {
	case half != nil:
		return nil, half
	case !ok:
		return nil, fmt.Errorf("memstorage: read %q: %w", key, fs.ErrNotExist)
	}
	return bytes.Clone(o.data), nil
}

// Stat gives the size of the object at key; see publish.Storage.
func (s *Storage) Stat(ctx context.Context, key string) (int64, bool, error) {
	if err := publish.CheckKey(key); err != nil {
		return 0, false, err
	}
	half, err := s.enter(ctx, OpStat, key, false)
	if err != nil {
		return 0, false, err
	}
	s.mu.Lock()
	o, ok := s.objects[key]
	s.mu.Unlock()
	if half != nil {
		return 0, false, half
	}
	return int64(len(o.data)), ok, nil
}

// List lists the keys under prefix in key order; see publish.Storage.
func (s *Storage) List(ctx context.Context, prefix string) ([]string, error) {
	if err := publish.CheckPrefix(prefix); err != nil {
		return nil, err
	}
	half, err := s.enter(ctx, OpList, prefix, false)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	keys := s.keysUnder(prefix)
	s.mu.Unlock()
	if half != nil {
		return nil, half
	}
	return keys, nil
}

// keysUnder lists the keys under prefix in order, under s.mu.
func (s *Storage) keysUnder(prefix string) []string {
	keys := []string{}
	for k := range s.objects {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// DeletePrefix deletes the objects under prefix; see publish.Storage.
func (s *Storage) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if prefix == "" {
		return 0, fmt.Errorf("memstorage: delete under an empty prefix: refusing to empty the root: %w", publish.ErrBadKey)
	}
	if err := publish.CheckPrefix(prefix); err != nil {
		return 0, err
	}
	half, err := s.enter(ctx, OpDeletePrefix, prefix, false)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	keys := s.keysUnder(prefix)
	for _, k := range keys {
		delete(s.objects, k)
	}
	s.mu.Unlock()
	if half != nil {
		return 0, half
	}
	return len(keys), nil
}

// writer states.
const (
	open = iota
	finished
	aborted
)

// writer writes one part: into its staged part when the storage hides
// parts, else into a buffer that Finish makes the object.
type writer struct {
	s     *Storage
	ctx   context.Context
	key   string
	id    string // the token, when the storage hides parts
	state int
	buf   []byte
	size  int64
}

// Write appends b to the part.
func (w *writer) Write(b []byte) (int, error) {
	if w.state != open {
		return 0, fmt.Errorf("memstorage: write to part %q after Finish or Abort", w.key)
	}
	half, err := w.s.enter(w.ctx, OpWrite, w.key, false)
	if err != nil {
		return 0, err
	}
	w.size += int64(len(b))
	if !w.s.caps.HidesParts {
		w.buf = append(w.buf, b...)
	} else {
		w.s.mu.Lock()
		if st, ok := w.s.staged[w.id]; ok {
			st.data = append(st.data, b...)
		}
		w.s.mu.Unlock()
	}
	if half != nil {
		return len(b), half
	}
	return len(b), nil
}

// Finish ends the part: it stays staged when the storage hides parts,
// else it becomes the object at its key, create-only.
func (w *writer) Finish() (publish.Part, error) {
	if w.state != open {
		return publish.Part{}, fmt.Errorf("memstorage: finish part %q after Finish or Abort", w.key)
	}
	half, err := w.s.enter(w.ctx, OpFinish, w.key, false)
	if err != nil {
		return publish.Part{}, err
	}
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	p := publish.Part{Key: w.key, Size: w.size}
	if w.s.caps.HidesParts {
		st, ok := w.s.staged[w.id]
		if !ok {
			w.state = aborted
			return publish.Part{}, fmt.Errorf("memstorage: finish part %q: it was aborted: %w", w.key, fs.ErrNotExist)
		}
		st.finished = true
		p.Token = w.id
	} else {
		if _, ok := w.s.objects[w.key]; ok {
			w.state = aborted
			return publish.Part{}, fmt.Errorf("memstorage: finish part %q: another object holds the key: %w", w.key, fs.ErrExist)
		}
		w.s.objects[w.key] = object{data: w.buf, origin: w.id}
	}
	w.state = finished
	if half != nil {
		return publish.Part{}, half
	}
	return p, nil
}

// Abort undoes the part, even after the writer's context is done.
func (w *writer) Abort() error {
	if w.state == aborted {
		return nil
	}
	half, err := w.s.enter(w.ctx, OpAbort, w.key, true)
	if err != nil {
		return err
	}
	prev := w.state
	w.state = aborted
	w.s.mu.Lock()
	if w.s.caps.HidesParts {
		delete(w.s.staged, w.id)
	} else if o, ok := w.s.objects[w.key]; ok && prev == finished && o.origin == w.id {
		delete(w.s.objects, w.key)
	}
	w.s.mu.Unlock()
	return half
}
