package lineage

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

// TestNewRunID: a UUID version 7 whose first 48 bits are the time in
// milliseconds, random in the rest.
func TestNewRunID(t *testing.T) {
	at := time.UnixMilli(0x0192_3456_789a)
	seen := map[string]bool{}
	for range 100 {
		id, err := NewRunID(at)
		if err != nil {
			t.Fatal(err)
		}
		if !uuidV7.MatchString(id) {
			t.Fatalf("%q is not a UUIDv7", id)
		}
		if ms := strings.ReplaceAll(id[:13], "-", ""); ms != "01923456789a" {
			t.Fatalf("%q: time bits %s, want 01923456789a", id, ms)
		}
		if _, err := hex.DecodeString(strings.ReplaceAll(id, "-", "")); err != nil {
			t.Fatalf("%q: %v", id, err)
		}
		if seen[id] {
			t.Fatalf("%q came twice", id)
		}
		seen[id] = true
	}
}
