//go:build !linux

package state

type mapping struct{}

func (m *mapping) open()  {}
func (m *mapping) close() {}

// ReleaseMapped does nothing on this system: mapped state pages stay
// resident until the kernel reclaims them.
func (db *DB) ReleaseMapped() error { return nil }

func (db *DB) releaseMapped() error { db.mappedBytes.Store(0); db.checkAt.Store(db.budget); return nil }

func (db *DB) mappedNow() (int64, bool) { return 0, false }
