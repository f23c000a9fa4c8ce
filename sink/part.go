package sink

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
)

// partFile is one part file being written: every byte goes to the part
// and to a running SHA-256, so the digest needs no second read.
type partFile struct {
	name  string
	w     PartWriter
	sum   hash.Hash
	bytes int64
	rows  int64
	enc   encoder
}

// createPart starts the part name in store; it must not exist yet.
func createPart(store PartStore, name string) (*partFile, error) {
	w, err := store.Create(name)
	if err != nil {
		return nil, err
	}
	return &partFile{name: name, w: w, sum: sha256.New()}, nil
}

// Write writes b to the part and the digest.
func (p *partFile) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.sum.Write(b[:n])
	p.bytes += int64(n)
	return n, err
}

// finish ends the encoding and makes the part durable.
func (p *partFile) finish() (FileInfo, error) {
	if err := p.enc.close(); err != nil {
		_ = p.w.Abort()
		return FileInfo{}, fmt.Errorf("finish %s: %w", p.name, err)
	}
	if err := p.w.Finish(); err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Name: p.name, Rows: p.rows, Bytes: p.bytes, SHA256: hex.EncodeToString(p.sum.Sum(nil))}, nil
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
