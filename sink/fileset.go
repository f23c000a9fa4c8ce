package sink

import (
	"errors"
	"fmt"
	"io"
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

// FileSet writes rows into numbered part files in one PartStore:
// part-00000.parquet, part-00001.parquet, ... (.arrows for Arrow IPC
// streams). No part is created until the first row is written, so a run
// with nothing new leaves nothing behind. Each part is made durable when
// finished (PartWriter.Finish). A Parquet FileSet encodes columns on
// background goroutines: end every FileSet with Close or Abort. A FileSet
// is not safe for concurrent use.
type FileSet struct {
	store  PartStore
	where  string
	schema Schema
	user   []Column
	opts   Options
	newEnc newEncoderFunc

	cur    *partFile
	done   []FileInfo
	names  []string // every part created, finished or not
	err    error    // first write error; the set is then unusable
	closed bool
}

// NewFileSet returns a FileSet writing s-shaped rows into the local folder
// dir (created with the first part); nothing is created on disk yet.
// Existing files are never overwritten: creating a part file that already
// exists is an error.
func NewFileSet(dir string, s Schema, opts Options) (*FileSet, error) {
	return NewFileSetIn(&DirParts{Dir: dir}, dir, s, opts)
}

// NewFileSetIn returns a FileSet writing s-shaped rows into store; where
// names the store in errors.
func NewFileSetIn(store PartStore, where string, s Schema, opts Options) (*FileSet, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("file set %s: %w", where, err)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("file set %s: %w", where, err)
	}
	s.Fields = slices.Clone(s.Fields) // later changes to the caller's slice do not matter
	var newEnc newEncoderFunc = newParquetEncoder
	if opts.Format == FormatArrow {
		newEnc = newArrowEncoder
	}
	return &FileSet{store: store, where: where, schema: s, user: s.User(), opts: opts, newEnc: newEnc}, nil
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
		w.err = fmt.Errorf("write %s in %s: %w", w.cur.name, w.where, err)
		return w.err
	}
	w.cur.rows++
	if w.cur.rows >= w.opts.MaxFileRows {
		w.err = w.finishPart()
	}
	return w.err
}

// Close finishes the last part file, syncs the store and returns one
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
		if err := w.store.Sync(); err != nil {
			return nil, err
		}
	}
	return w.done, nil
}

// Abort stops writing and removes every part the set created (and a
// folder DirParts created, when it is left empty). It may be called after
// Close, and more than once.
func (w *FileSet) Abort() error {
	w.closed = true
	w.dropPart()
	var errs []error
	for _, name := range w.names {
		if err := w.store.Remove(name); err != nil {
			errs = append(errs, err)
		}
	}
	w.names, w.done = nil, nil
	return errors.Join(errs...)
}

// openPart creates the next part file.
func (w *FileSet) openPart() error {
	name := fmt.Sprintf("part-%05d%s", len(w.names), w.opts.Format.Ext())
	p, err := createPart(w.store, name)
	if err != nil {
		return err
	}
	w.names = append(w.names, name)
	if p.enc, err = w.newEnc(p, w.schema, w.opts); err != nil {
		_ = p.w.Abort()
		return fmt.Errorf("start %s in %s: %w", name, w.where, err)
	}
	w.cur = p
	return nil
}

// finishPart ends the current part file and makes it durable.
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

// dropPart abandons the current part file without finishing it.
func (w *FileSet) dropPart() {
	if w.cur != nil {
		w.cur.enc.abandon()
		_ = w.cur.w.Abort()
		w.cur = nil
	}
}
