package sink

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// FileInfo describes one finished part file.
type FileInfo struct {
	// Name is the file name inside the FileSet's folder, e.g.
	// "part-00000.parquet".
	Name string `json:"name"`
	// Rows is the number of rows in the file.
	Rows int64 `json:"rows"`
	// Bytes is the file size.
	Bytes int64 `json:"bytes"`
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string `json:"sha256"`
}

// encoder writes rows of one part file in its format.
type encoder interface {
	// write appends a row whose values checkRow accepted.
	write(r Row) error
	// close flushes the buffered rows and ends the file (footer or
	// end-of-stream marker); it does not close the underlying writer.
	close() error
	// abandon releases the encoder's memory without finishing the file.
	abandon()
}

// newEncoderFunc starts an encoder writing to w.
type newEncoderFunc func(w io.Writer, s Schema, opts Options) (encoder, error)

// FileSet writes rows into numbered part files in one folder:
// part-00000.parquet, part-00001.parquet, ... (.arrows for Arrow IPC
// streams). No file, nor the folder, is created until the first row is
// written, so a run with nothing new leaves nothing behind. Each file is
// fsynced when closed. A Parquet FileSet encodes columns on background
// goroutines: end every FileSet with Close or Abort. A FileSet is not safe
// for concurrent use.
type FileSet struct {
	dir    string
	schema Schema
	user   []Column
	opts   Options
	newEnc newEncoderFunc

	cur     *partFile
	done    []FileInfo
	paths   []string // every file created, finished or not
	madeDir bool
	err     error // first write error; the set is then unusable
	closed  bool
}

// NewFileSet returns a FileSet writing s-shaped rows into dir; nothing is
// created on disk yet. Existing files are never overwritten: creating a
// part file that already exists is an error.
func NewFileSet(dir string, s Schema, opts Options) (*FileSet, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("file set %s: %w", dir, err)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("file set %s: %w", dir, err)
	}
	s.Fields = slices.Clone(s.Fields) // later changes to the caller's slice do not matter
	var newEnc newEncoderFunc = newParquetEncoder
	if opts.Format == FormatArrow {
		newEnc = newArrowEncoder
	}
	return &FileSet{dir: dir, schema: s, user: s.User(), opts: opts, newEnc: newEnc}, nil
}

// Write appends one row, starting a new part file when needed. A row whose
// values do not fit the schema is rejected and the set stays usable; after
// an I/O error every call fails and the caller should Abort.
func (w *FileSet) Write(r Row) error {
	if w.closed {
		return errors.New("write to a closed file set")
	}
	if w.err != nil {
		return w.err
	}
	if err := checkRow(w.user, &r); err != nil {
		return err
	}
	if w.cur == nil {
		if w.err = w.openPart(); w.err != nil {
			return w.err
		}
	}
	if err := w.cur.enc.write(r); err != nil {
		w.err = fmt.Errorf("write %s: %w", w.cur.path, err)
		return w.err
	}
	w.cur.rows++
	if w.cur.rows >= w.opts.MaxFileRows {
		w.err = w.finishPart()
	}
	return w.err
}

// Close finishes the last part file, syncs the folder and returns one
// FileInfo per file written, in order; none when no row was written.
func (w *FileSet) Close() ([]FileInfo, error) {
	if w.closed {
		return nil, errors.New("close a closed file set")
	}
	w.closed = true
	if w.err != nil {
		w.dropPart()
		return nil, w.err
	}
	if w.cur != nil {
		if err := w.finishPart(); err != nil {
			return nil, err
		}
	}
	if len(w.done) > 0 {
		if err := syncDir(w.dir); err != nil {
			return nil, err
		}
	}
	return w.done, nil
}

// Abort stops writing and removes every file the set created (and its
// folder, when the set created it and it is left empty). It may be called
// after Close, and more than once.
func (w *FileSet) Abort() error {
	w.closed = true
	w.dropPart()
	var errs []error
	for _, p := range w.paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", p, err))
		}
	}
	w.paths, w.done = nil, nil
	if w.madeDir && len(errs) == 0 {
		if err := os.Remove(w.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", w.dir, err))
		}
		w.madeDir = false
	}
	return errors.Join(errs...)
}

// openPart creates the next part file, and the folder before the first.
func (w *FileSet) openPart() error {
	if len(w.paths) == 0 {
		if _, err := os.Stat(w.dir); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(w.dir, 0o755); err != nil {
				return fmt.Errorf("create %s: %w", w.dir, err)
			}
			w.madeDir = true
		}
	}
	name := fmt.Sprintf("part-%05d%s", len(w.paths), w.opts.Format.Ext())
	p, err := createPart(filepath.Join(w.dir, name))
	if err != nil {
		return err
	}
	w.paths = append(w.paths, p.path)
	if p.enc, err = w.newEnc(p, w.schema, w.opts); err != nil {
		p.f.Close()
		return fmt.Errorf("start %s: %w", p.path, err)
	}
	w.cur = p
	return nil
}

// finishPart ends, syncs and closes the current part file.
func (w *FileSet) finishPart() error {
	p := w.cur
	w.cur = nil
	info, err := p.finish()
	if err != nil {
		return err
	}
	w.done = append(w.done, info)
	return nil
}

// dropPart closes the current part file without finishing it.
func (w *FileSet) dropPart() {
	if w.cur != nil {
		w.cur.enc.abandon()
		w.cur.f.Close()
		w.cur = nil
	}
}
