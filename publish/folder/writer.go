package folder

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/databrew/databrew-stage/publish"
)

// partWriter writes a part's staged file.
type partWriter struct {
	s     *Storage
	ctx   context.Context
	key   string
	token string
	file  string
	f     *os.File // nil once finished or aborted
	size  int64
}

// Write appends b to the staged file, unless the context is done.
func (w *partWriter) Write(b []byte) (int, error) {
	if w.f == nil {
		return 0, fmt.Errorf("write part %s after Finish or Abort", w.s.path(w.key))
	}
	if err := canceled(w.ctx, "write part "+w.s.path(w.key)); err != nil {
		return 0, err
	}
	n, err := w.f.Write(b)
	w.size += int64(n)
	if err != nil {
		return n, fmt.Errorf("write part %s: %w", w.s.path(w.key), err)
	}
	return n, nil
}

// Finish syncs and closes the staged file, and syncs the folders that
// hold it, up to the root.
func (w *partWriter) Finish() (publish.Part, error) {
	if w.f == nil {
		return publish.Part{}, fmt.Errorf("finish part %s after Finish or Abort", w.s.path(w.key))
	}
	where := w.s.path(w.key)
	if err := canceled(w.ctx, "finish part "+where); err != nil {
		return publish.Part{}, err
	}
	f := w.f
	w.f = nil
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncUp(filepath.Dir(w.file), w.s.root)
	}
	if err != nil {
		_ = os.RemoveAll(filepath.Join(w.s.staging, partsDir, w.token))
		return publish.Part{}, fmt.Errorf("finish part %s: %w", where, err)
	}
	return publish.Part{Key: w.key, Token: w.token, Size: w.size}, nil
}

// Abort closes the staged file, if open, and removes it.
func (w *partWriter) Abort() error {
	if w.f != nil {
		_ = w.f.Close()
		w.f = nil
	}
	if err := os.RemoveAll(filepath.Join(w.s.staging, partsDir, w.token)); err != nil {
		return fmt.Errorf("abort part %s: %w", w.s.path(w.key), err)
	}
	return nil
}
