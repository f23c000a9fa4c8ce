package sink

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"
)

// partFile is one part file being written: every byte goes to the file and
// to a running SHA-256, so the digest needs no second read.
type partFile struct {
	path  string
	f     *os.File
	sum   hash.Hash
	bytes int64
	rows  int64
	enc   encoder
}

// createPart creates the file at path; it must not exist yet.
func createPart(path string) (*partFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &partFile{path: path, f: f, sum: sha256.New()}, nil
}

// Write writes b to the file and the digest.
func (p *partFile) Write(b []byte) (int, error) {
	n, err := p.f.Write(b)
	p.sum.Write(b[:n])
	p.bytes += int64(n)
	return n, err
}

// finish ends the encoding, fsyncs and closes the file.
func (p *partFile) finish() (FileInfo, error) {
	if err := p.enc.close(); err != nil {
		p.f.Close()
		return FileInfo{}, fmt.Errorf("finish %s: %w", p.path, err)
	}
	if err := p.f.Sync(); err != nil {
		p.f.Close()
		return FileInfo{}, fmt.Errorf("sync %s: %w", p.path, err)
	}
	if err := p.f.Close(); err != nil {
		return FileInfo{}, fmt.Errorf("close %s: %w", p.path, err)
	}
	return FileInfo{Name: filepath.Base(p.path), Rows: p.rows, Bytes: p.bytes, SHA256: hex.EncodeToString(p.sum.Sum(nil))}, nil
}

// syncDir fsyncs a folder so the entries of new files are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
