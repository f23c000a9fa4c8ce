package storagetest

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/databrew/databrew-stage/publish"
)

// fixture drives one storage and fails the test on any unexpected error.
type fixture struct {
	t    *testing.T
	s    publish.Storage
	caps publish.Caps
}

// ctx is the test's context.
func (f *fixture) ctx() context.Context { return f.t.Context() }

// payload is n pseudo-random bytes, the same for the same seed.
func payload(n int, seed uint64) []byte {
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(key).Read(b)
	return b
}

// writeAll writes data to w in writes of uneven sizes, so a backend's
// chunk boundaries fall inside them.
func (f *fixture) writeAll(w publish.PartWriter, data []byte) {
	f.t.Helper()
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 1<<20+7)
		if k, err := w.Write(rest[:n]); err != nil || k != n {
			f.t.Fatalf("Write = %d, %v; want %d", k, err, n)
		}
		rest = rest[n:]
	}
}

// open stages a part at key and writes data to it, unfinished.
func (f *fixture) open(key string, data []byte) publish.PartWriter {
	f.t.Helper()
	w, err := f.s.StagePart(f.ctx(), key)
	if err != nil {
		f.t.Fatalf("StagePart(%q): %v", key, err)
	}
	f.writeAll(w, data)
	return w
}

// finish finishes w, which holds data at key.
func (f *fixture) finish(w publish.PartWriter, key string, data []byte) publish.Part {
	f.t.Helper()
	p, err := w.Finish()
	if err != nil {
		f.t.Fatalf("Finish of %q: %v", key, err)
	}
	if p.Key != key || p.Size != int64(len(data)) {
		f.t.Fatalf("Finish of %q = %+v; want key %q and %d bytes", key, p, key, len(data))
	}
	return p
}

// stage stages data at key and finishes it.
func (f *fixture) stage(key string, data []byte) publish.Part {
	f.t.Helper()
	return f.finish(f.open(key, data), key, data)
}

func (f *fixture) complete(p publish.Part) {
	f.t.Helper()
	if err := f.s.CompletePart(f.ctx(), p); err != nil {
		f.t.Fatalf("CompletePart(%+v): %v", p, err)
	}
}

func (f *fixture) put(key string, data []byte) {
	f.t.Helper()
	if err := f.s.Put(f.ctx(), key, data); err != nil {
		f.t.Fatalf("Put(%q): %v", key, err)
	}
}

func (f *fixture) putIfAbsent(key string, data []byte) bool {
	f.t.Helper()
	created, err := f.s.PutIfAbsent(f.ctx(), key, data)
	if err != nil {
		f.t.Fatalf("PutIfAbsent(%q): %v", key, err)
	}
	return created
}

// expectObject fails unless the object at key holds want, by Read and
// Stat.
func (f *fixture) expectObject(key string, want []byte) {
	f.t.Helper()
	got, err := f.s.Read(f.ctx(), key)
	if err != nil {
		f.t.Fatalf("Read(%q): %v", key, err)
	}
	if !bytes.Equal(got, want) {
		f.t.Fatalf("Read(%q) = %d bytes %q; want %d bytes %q", key, len(got), clip(got), len(want), clip(want))
	}
	size, exists, err := f.s.Stat(f.ctx(), key)
	if err != nil || !exists || size != int64(len(want)) {
		f.t.Fatalf("Stat(%q) = %d, %v, %v; want %d bytes", key, size, exists, err, len(want))
	}
}

// expectNoObject fails unless key holds no object, by Read, Stat and
// List.
func (f *fixture) expectNoObject(key string) {
	f.t.Helper()
	if got, err := f.s.Read(f.ctx(), key); !errors.Is(err, fs.ErrNotExist) {
		f.t.Fatalf("Read(%q) = %d bytes, %v; want an error wrapping fs.ErrNotExist", key, len(got), err)
	}
	if size, exists, err := f.s.Stat(f.ctx(), key); err != nil || exists {
		f.t.Fatalf("Stat(%q) = %d, %v, %v; want no object", key, size, exists, err)
	}
	if slices.Contains(f.list(key), key) {
		f.t.Fatalf("List(%q) lists it; want no object", key)
	}
}

func (f *fixture) list(prefix string) []string {
	f.t.Helper()
	keys, err := f.s.List(f.ctx(), prefix)
	if err != nil {
		f.t.Fatalf("List(%q): %v", prefix, err)
	}
	return keys
}

// expectList fails unless List(prefix) is want, in that order.
func (f *fixture) expectList(prefix string, want ...string) {
	f.t.Helper()
	if got := f.list(prefix); !slices.Equal(got, want) {
		f.t.Fatalf("List(%q) = %q; want %q", prefix, got, want)
	}
}

func (f *fixture) listStaged(prefix string) []publish.Staged {
	f.t.Helper()
	st, err := f.s.ListStaged(f.ctx(), prefix)
	if err != nil {
		f.t.Fatalf("ListStaged(%q): %v", prefix, err)
	}
	return st
}

// stagedKeys is the keys ListStaged(prefix) lists, in its order.
func (f *fixture) stagedKeys(prefix string) []string {
	f.t.Helper()
	var keys []string
	for _, s := range f.listStaged(prefix) {
		keys = append(keys, s.Key)
	}
	return keys
}

// expectStaged fails unless ListStaged(prefix) lists the keys want, in
// that order.
func (f *fixture) expectStaged(prefix string, want ...string) {
	f.t.Helper()
	if got := f.stagedKeys(prefix); !slices.Equal(got, want) {
		f.t.Fatalf("ListStaged(%q) = %q; want %q", prefix, got, want)
	}
}

func (f *fixture) abortStaged(prefix string, own func(publish.Staged) bool) int {
	f.t.Helper()
	n, err := f.s.AbortStaged(f.ctx(), prefix, own)
	if err != nil {
		f.t.Fatalf("AbortStaged(%q): %v", prefix, err)
	}
	return n
}

// anyPart owns every staged part: a suite's root holds no other
// application's.
func anyPart(publish.Staged) bool { return true }

// expectErr fails unless err wraps want.
func (f *fixture) expectErr(what string, err, want error) {
	f.t.Helper()
	if !errors.Is(err, want) {
		f.t.Fatalf("%s = %v; want an error wrapping %v", what, err, want)
	}
}

// clip shortens a payload for a message.
func clip(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}
