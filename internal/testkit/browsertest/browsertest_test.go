package browsertest

import (
	"errors"
	"testing"
)

// recorder is a testing.TB that records how a test ended.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()                        {}
func (r *recorder) Skipf(format string, a ...any)  { r.skipped = true }
func (r *recorder) Fatalf(format string, a ...any) { r.failed = true }

func TestNeed(t *testing.T) {
	missing := errors.New("no browser found")
	for _, tc := range []struct {
		name            string
		require         string
		err             error
		skipped, failed bool
	}{
		{"found", "", nil, false, false},
		{"found and required", "1", nil, false, false},
		{"missing", "", missing, true, false},
		{"missing but required", "1", missing, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(RequireEnv, tc.require)
			r := &recorder{TB: t}
			Need(r, tc.err)
			if r.skipped != tc.skipped || r.failed != tc.failed {
				t.Fatalf("skipped %v, failed %v; want %v, %v", r.skipped, r.failed, tc.skipped, tc.failed)
			}
		})
	}
}
