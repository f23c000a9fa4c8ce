package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// A state file is judged with plain reads before bbolt maps it: bbolt
// reads pages through a memory map, where a page beyond the end of a
// truncated file faults, and it panics on a page that is not what its
// parent says. What follows reads bbolt's on-disk format (bbolt v1.5.0,
// file format 2), whose structures are written in the machine's byte
// order:
//
//	page header  id u64, flags u16, count u16, overflow u32
//	meta         magic u32, version u32, page size u32, flags u32,
//	             root bucket (root page u64, sequence u64), free list
//	             page u64, high-water mark u64, txid u64, checksum u64:
//	             FNV-64a of the meta's bytes before the checksum
//	branch elem  pos u32, key size u32, child page u64
//	leaf elem    flags u32, pos u32, key size u32, value size u32
//
// Pages 0 and 1 are the two meta pages; bbolt uses the valid one with the
// higher txid. Every page below the high-water mark is in the file. An
// element's key starts pos bytes after the element; a leaf's value follows
// its key. A bucket's value is its root page and sequence, followed by the
// bucket's page itself when the root page is 0 (an inline bucket).

const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16
	metaSize         = 64
	metaChecksumAt   = 56
	elemSize         = 16
	bucketHeaderSize = 16
	noFreelist       = ^uint64(0)
	// countOverflow in a free list page's count means the real count is
	// the page's first id.
	countOverflow = 0xFFFF

	pageBranch   = 0x01
	pageLeaf     = 0x02
	pageFreelist = 0x10
	leafBucket   = 0x01

	// minPageSize and maxPageSize bound the page sizes bbolt looks for.
	minPageSize = 1 << 10
	maxPageSize = 1 << 24
)

var native = binary.NativeEndian

// boltMeta is the part of a meta page the checks use.
type boltMeta struct {
	pageSize                   uint64
	root, freelist, pgid, txid uint64
}

// pageHeader is a page's header.
type pageHeader struct {
	id       uint64
	flags    uint16
	count    uint16
	overflow uint32
}

func readHeader(b []byte) pageHeader {
	return pageHeader{id: native.Uint64(b), flags: native.Uint16(b[8:]), count: native.Uint16(b[10:]), overflow: native.Uint32(b[12:])}
}

// decodeMeta reads the meta in a meta page, or says why it is not valid.
func decodeMeta(page []byte) (boltMeta, error) {
	if len(page) < pageHeaderSize+metaSize {
		return boltMeta{}, errors.New("cut short")
	}
	m := page[pageHeaderSize:]
	h := fnv.New64a()
	_, _ = h.Write(m[:metaChecksumAt])
	switch {
	case native.Uint32(m) != boltMagic:
		return boltMeta{}, errors.New("no bbolt marker")
	case native.Uint32(m[4:]) != boltVersion:
		return boltMeta{}, fmt.Errorf("bbolt file format %d, not %d", native.Uint32(m[4:]), boltVersion)
	case native.Uint64(m[metaChecksumAt:]) != h.Sum64():
		return boltMeta{}, errors.New("wrong checksum")
	}
	return boltMeta{
		pageSize: uint64(native.Uint32(m[8:])), root: native.Uint64(m[16:]),
		freelist: native.Uint64(m[32:]), pgid: native.Uint64(m[40:]), txid: native.Uint64(m[48:]),
	}, nil
}

// boltFile reads a state file with plain reads.
type boltFile struct {
	f    *os.File
	size int64
	meta boltMeta
}

// openBoltFile reads the meta bbolt would use: the valid one of the two
// with the higher txid. The error, a plain string, says what is wrong when
// neither is valid.
func openBoltFile(f *os.File) (*boltFile, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	bf := &boltFile{f: f, size: st.Size()}
	buf := make([]byte, pageHeaderSize+metaSize)
	m0, err0 := bf.metaAt(buf, 0)
	var m1 boltMeta
	var err1 error = errors.New("not found")
	if err0 == nil {
		m1, err1 = bf.metaAt(buf, int64(m0.pageSize))
	} else {
		// Without page 0's page size, look for page 1 where bbolt does.
		for size := int64(minPageSize); size <= maxPageSize && size < bf.size; size <<= 1 {
			if m1, err1 = bf.metaAt(buf, size); err1 == nil {
				break
			}
		}
	}
	switch {
	case err0 != nil && err1 != nil:
		return nil, fmt.Errorf("neither meta page is valid (page 0: %v; page 1: %v)", err0, err1)
	case err0 != nil || (err1 == nil && m1.txid > m0.txid):
		bf.meta = m1
	default:
		bf.meta = m0
	}
	return bf, nil
}

func (bf *boltFile) metaAt(buf []byte, off int64) (boltMeta, error) {
	n, err := bf.f.ReadAt(buf, off)
	if n < len(buf) {
		if err == io.EOF {
			return boltMeta{}, errors.New("beyond the end of the file")
		}
		return boltMeta{}, err
	}
	m, err := decodeMeta(buf)
	if err == nil && (m.pageSize < minPageSize || m.pageSize > maxPageSize) {
		err = fmt.Errorf("page size %d", m.pageSize)
	}
	return m, err
}

// pages is how many pages the file holds.
func (bf *boltFile) pages() uint64 { return uint64(bf.size) / bf.meta.pageSize }

// checkMeta reports what is wrong with the meta's page numbers: a high-water
// mark beyond the end of the file (a truncated file), a root or free list
// page out of range, or one that is not what the meta says it is.
func (bf *boltFile) checkMeta() error {
	m := bf.meta
	switch {
	case m.pgid < 3:
		return fmt.Errorf("its meta page says it has %d pages", m.pgid)
	case m.pgid > bf.pages():
		return fmt.Errorf("it is truncated: it has %d bytes, its pages need %d (%d pages of %d bytes)",
			bf.size, m.pgid*m.pageSize, m.pgid, m.pageSize)
	case m.root < 2 || m.root >= m.pgid:
		return fmt.Errorf("its root page %d is out of range", m.root)
	case m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.pgid || m.freelist == m.root):
		return fmt.Errorf("its free list page %d is out of range", m.freelist)
	}
	if _, err := bf.readPage(m.root, nil, pageBranch, pageLeaf); err != nil {
		return fmt.Errorf("its root page: %w", err)
	}
	if m.freelist != noFreelist {
		if _, err := bf.freePages(); err != nil {
			return fmt.Errorf("its free list: %w", err)
		}
	}
	return nil
}

// readPage reads page id with its overflow pages into buf (grown as
// needed) and checks that it says it is page id, of one of the given
// kinds, and within the high-water mark.
func (bf *boltFile) readPage(id uint64, buf []byte, kinds ...uint16) ([]byte, error) {
	ps := bf.meta.pageSize
	if id < 2 || id >= bf.meta.pgid {
		return buf, fmt.Errorf("page %d is out of range (%d pages)", id, bf.meta.pgid)
	}
	var head [pageHeaderSize]byte
	if err := bf.readAt(head[:], id*ps); err != nil {
		return buf, fmt.Errorf("page %d: %w", id, err)
	}
	h := readHeader(head[:])
	if h.id != id {
		return buf, fmt.Errorf("page %d calls itself page %d", id, h.id)
	}
	kindOK := false
	for _, k := range kinds {
		kindOK = kindOK || h.flags == k
	}
	if !kindOK {
		return buf, fmt.Errorf("page %d has the wrong kind (flags %#x)", id, h.flags)
	}
	if uint64(h.overflow) >= bf.meta.pgid-id {
		return buf, fmt.Errorf("page %d runs past the last page (%d overflow pages)", id, h.overflow)
	}
	n := (uint64(h.overflow) + 1) * ps
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if err := bf.readAt(buf, id*ps); err != nil {
		return buf, fmt.Errorf("page %d: %w", id, err)
	}
	return buf, nil
}

func (bf *boltFile) readAt(b []byte, off uint64) error {
	if off > uint64(bf.size) {
		return fmt.Errorf("lies beyond the end of the file (%d bytes)", bf.size)
	}
	n, err := bf.f.ReadAt(b, int64(off))
	if n == len(b) {
		return nil
	}
	if err == io.EOF {
		return fmt.Errorf("lies beyond the end of the file (%d bytes)", bf.size)
	}
	return err
}

// freePages reads the free list page, checking that every id it lists is
// in range.
func (bf *boltFile) freePages() ([]uint64, error) {
	page, err := bf.readPage(bf.meta.freelist, nil, pageFreelist)
	if err != nil {
		return nil, err
	}
	h := readHeader(page)
	start, count := uint64(pageHeaderSize), uint64(h.count)
	if h.count == countOverflow {
		count = native.Uint64(page[pageHeaderSize:])
		start += 8
	}
	if count > (uint64(len(page))-start)/8 {
		return nil, fmt.Errorf("page %d lists %d free pages, more than it holds", bf.meta.freelist, count)
	}
	ids := make([]uint64, count)
	for i := range ids {
		ids[i] = native.Uint64(page[start+uint64(i)*8:])
		if ids[i] < 2 || ids[i] >= bf.meta.pgid {
			return nil, fmt.Errorf("page %d lists page %d as free, out of range", bf.meta.freelist, ids[i])
		}
	}
	return ids, nil
}
