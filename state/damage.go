package state

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// ErrCorrupt matches the error of every DB method, Open included, that
// found the state file damaged.
var ErrCorrupt = errors.New("the state file is damaged")

// ErrNoState matches the error Open returns for a missing or empty state
// file when Options.MustExist says a state must be there.
var ErrNoState = errors.New("the state is lost")

// CorruptError says what is wrong with a state file. It matches
// ErrCorrupt.
type CorruptError struct {
	// Path is the state file.
	Path string
	// Problem says what is wrong, in plain words.
	Problem string
}

// Error names the file and says what is wrong with it.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("state file %s is damaged: %s", e.Path, e.Problem)
}

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// recoverDamage, deferred by a call that reads the file through bbolt,
// turns a panic into an error that matches ErrCorrupt and names the file:
// bbolt panics on a page that is not what its parent says, and reading a
// page beyond the end of a truncated file through the memory map faults,
// which panics too while panicOnFault is set for the goroutine (the call
// sets it and passes the previous setting, which this restores):
//
//	defer recoverDamage(path, &err, debug.SetPanicOnFault(true))
func recoverDamage(path string, err *error, panicOnFault bool) {
	debug.SetPanicOnFault(panicOnFault)
	r := recover()
	if r == nil {
		return
	}
	problem := fmt.Sprintf("a page is garbled (%v)", r)
	if fault, ok := r.(interface{ Addr() uintptr }); ok {
		problem = fmt.Sprintf("a page lies outside the file: it is shorter than its pages say, or a page points past its end (memory fault at %#x)", fault.Addr())
	}
	*err = &CorruptError{Path: path, Problem: problem}
}

// boltDB is the bbolt file every DB method reaches bbolt through: its View
// and Update recover a panic or a memory fault (see recoverDamage). Once
// one was recovered, the file is damaged: every later transaction returns
// that error without reading it, and Close does not write to it.
type boltDB struct {
	*bolt.DB
	path   string
	damage atomic.Pointer[CorruptError]
	// writer is held by a write transaction from before it begins until
	// what it changed of the state held in memory is settled (see
	// recent.go): bbolt lets the next write transaction begin as soon as
	// the file is written.
	writer sync.Mutex
	// prepare, when set, runs before a write transaction commits; settle
	// after, with the commit's error.
	prepare func(*bolt.Tx)
	settle  func(*bolt.Tx, error)
}

// View runs fn in a read transaction.
func (b *boltDB) View(fn func(*bolt.Tx) error) error { return b.guarded(b.DB.View, fn) }

// Update runs fn in a write transaction and commits it unless fn returns
// an error.
func (b *boltDB) Update(fn func(*bolt.Tx) error) error { return b.guarded(b.update, fn) }

// update is bbolt's Update but for how it rolls back after a panic: bbolt's
// own rollback then rebuilds the free list of a file without one (as this
// package keeps it while open) by reading every page on a goroutine of its
// own, where a damaged page would crash the process. Rollback, called
// here, only forgets the transaction's pages, which is all a file found
// damaged needs: it is not written to again.
func (b *boltDB) update(fn func(*bolt.Tx) error) error {
	b.writer.Lock()
	defer b.writer.Unlock()
	tx, err := b.DB.Begin(true)
	if err != nil {
		return err
	}
	defer func() {
		if tx.DB() != nil {
			_ = tx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if b.prepare != nil {
		b.prepare(tx)
	}
	err = tx.Commit()
	if b.settle != nil {
		b.settle(tx, err)
	}
	return err
}

func (b *boltDB) guarded(tx func(func(*bolt.Tx) error) error, fn func(*bolt.Tx) error) (err error) {
	if d := b.damage.Load(); d != nil {
		return d
	}
	defer func() {
		var d *CorruptError
		if errors.As(err, &d) {
			b.damage.CompareAndSwap(nil, d)
		}
	}()
	defer recoverDamage(b.path, &err, debug.SetPanicOnFault(true))
	return tx(fn)
}

// damaged reports whether a transaction found the file damaged.
func (b *boltDB) damaged() bool { return b.damage.Load() != nil }

// openBolt opens the file with bbolt, which reads its free list.
func openBolt(path string, opts *bolt.Options) (db *bolt.DB, err error) {
	defer recoverDamage(path, &err, debug.SetPanicOnFault(true))
	return bolt.Open(path, 0o600, opts)
}
