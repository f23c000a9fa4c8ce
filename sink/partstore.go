package sink

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// PartStore holds the part files of a FileSet: a local folder (DirParts)
// or a run prefix in object storage.
type PartStore interface {
	// Create starts the part file name; it fails when one exists.
	Create(name string) (PartWriter, error)
	// Remove deletes a part, finished or not; a part that is not there
	// needs no removal.
	Remove(name string) error
	// Sync makes the finished parts durable as a set (a folder's
	// entries); Close calls it once at the end.
	Sync() error
}

// PartWriter receives the bytes of one part file.
type PartWriter interface {
	io.Writer
	// Finish makes the bytes written durable: a local file is synced and
	// closed, an object-storage part uploaded (not necessarily visible).
	Finish() error
	// Abort discards the part.
	Abort() error
}

// DirParts is a PartStore writing files into a local folder, created with
// the first part. Files are created exclusively and synced when finished.
type DirParts struct {
	Dir     string
	madeDir bool
	// made holds the files created, to remove the folder when the last
	// one goes.
	made int
}

// Create creates the file name in the folder, and the folder first.
func (d *DirParts) Create(name string) (PartWriter, error) {
	if d.made == 0 {
		if _, err := os.Stat(d.Dir); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(d.Dir, 0o755); err != nil {
				return nil, fmt.Errorf("create %s: %w", d.Dir, err)
			}
			d.madeDir = true
		}
	}
	path := filepath.Join(d.Dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	d.made++
	return &dirPart{f: f, path: path}, nil
}

// Remove deletes the file name, and the folder when DirParts created it
// and it is left empty.
func (d *DirParts) Remove(name string) error {
	path := filepath.Join(d.Dir, name)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	if d.made--; d.made <= 0 && d.madeDir {
		if err := os.Remove(d.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", d.Dir, err)
		}
		d.madeDir = false
	}
	return nil
}

// Sync makes the folder's entries durable.
func (d *DirParts) Sync() error { return syncDir(d.Dir) }

// dirPart is one file of a DirParts.
type dirPart struct {
	f    *os.File
	path string
}

func (p *dirPart) Write(b []byte) (int, error) { return p.f.Write(b) }

// Finish syncs and closes the file.
func (p *dirPart) Finish() error {
	if err := p.f.Sync(); err != nil {
		p.f.Close()
		return fmt.Errorf("sync %s: %w", p.path, err)
	}
	if err := p.f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", p.path, err)
	}
	return nil
}

// Abort closes the file; Remove deletes it.
func (p *dirPart) Abort() error {
	_ = p.f.Close()
	return nil
}
