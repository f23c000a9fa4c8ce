package iceberg

import (
	"os"
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/pgtest"
)

// TestMain stops the PostgreSQL server the package's tests share (each
// has a database of its own on it, see pgtest.Shared).
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}
