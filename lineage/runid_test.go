package lineage

import (
	"encoding/hex"
	"regexp"
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

// TestUUIDv5: the name-based UUIDs follow RFC 9562 (the example of
// Python's uuid.uuid5(NAMESPACE_DNS, "python.org")), and LogicalRunSpace
// is the UUID its comment says.
func TestUUIDv5(t *testing.T) {
	dns := mustParseUUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	if got, want := uuidV5(dns, "python.org"), "886313e1-3b8a-5372-9b90-0c9aee199e5d"; got != want {
		t.Errorf("uuidV5(DNS, python.org) = %s, want %s", got, want)
	}
	url := mustParseUUID("6ba7b811-9dad-11d1-80b4-00c04fd430c8")
	if got := uuidV5(url, "https://github.com/databrew/databrew-stage/lineage#logical-run"); got != LogicalRunSpace {
		t.Errorf("the name space of logical runs is %s, want %s", LogicalRunSpace, got)
	}
}

// TestLogicalRunID: a logical run's id is a UUIDv5 of the job namespace,
// the config and the run id, the same wherever it is derived and another
// for another run id, config or namespace.
func TestLogicalRunID(t *testing.T) {
	id := LogicalRunID("databrew-stage", "books", "nightly-1")
	if id != "5fe9a073-51b3-5de8-9bd8-afb782155cb6" {
		t.Errorf("LogicalRunID = %s, want uuid5(LogicalRunSpace, \"databrew-stage/books/nightly-1\")", id)
	}
	if !uuidV5Pattern.MatchString(id) {
		t.Errorf("%s is not a UUIDv5", id)
	}
	seen := map[string]bool{id: true}
	for _, other := range []string{
		LogicalRunID("databrew-stage", "books", "nightly-2"),
		LogicalRunID("databrew-stage", "shoes", "nightly-1"),
		LogicalRunID("crawlers", "books", "nightly-1"),
	} {
		if seen[other] {
			t.Errorf("%s came twice", other)
		}
		seen[other] = true
	}
}

var uuidV5Pattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
