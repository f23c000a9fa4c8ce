//go:build !linux

package state

type mapping struct{}

func (m *mapping) open()  {}
func (m *mapping) close() {}

// ReleaseMapped does nothing on this system but start a new estimate:
// mapped state pages stay resident until the kernel reclaims them.
func (db *DB) ReleaseMapped() error { return db.releaseMapped() }

// releaseMapped starts a new estimate of what is mapped, so that commits
// still take a transaction per budget's worth of lookups.
func (db *DB) releaseMapped() error {
	db.mappedBytes.Store(0)
	db.checkAt.Store(db.budget)
	return nil
}

func (db *DB) mappedNow() (int64, bool) { return 0, false }
