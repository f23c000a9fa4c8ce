package stage

import (
	"strings"
	"testing"
)

// TestValidRunID: the ids an orchestrator gives pass; ids that name no
// folder, and ids that object storage's keys would read as escaped
// characters ("__0x41__"), are refused.
func TestValidRunID(t *testing.T) {
	for _, id := range []string{"20240301T000000", "nightly-1", "manual__2024-03-01", "a.b_c-d", strings.Repeat("x", 128)} {
		if err := ValidRunID(id); err != nil {
			t.Errorf("ValidRunID(%q) = %v; want nil", id, err)
		}
	}
	for _, id := range []string{"", "-x", "a/b", "scheduled__2024-03-01T00:00:00+00:00", strings.Repeat("x", 129),
		"run__0x41__", "RUN__0X41__", "a__0x2F__b"} {
		if err := ValidRunID(id); err == nil {
			t.Errorf("ValidRunID(%q) = nil; want an error", id)
		}
	}
}
