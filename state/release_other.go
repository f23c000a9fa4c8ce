//go:build !linux

package state

type mapping struct{}

// ReleaseMapped does nothing on this system: mapped state pages stay
// resident until the kernel reclaims them.
func (db *DB) ReleaseMapped() error { return nil }
