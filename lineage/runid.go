package lineage

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// NewRunID returns a random UUID version 7 (RFC 9562): 48 bits of the
// Unix time in milliseconds, then random bits, so run ids sort by start.
func NewRunID(now time.Time) (string, error) {
	var u [16]byte
	if _, err := rand.Read(u[6:]); err != nil {
		return "", fmt.Errorf("new run id: %w", err)
	}
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(now.UnixMilli()))
	copy(u[:6], ms[2:])
	u[6] = u[6]&0x0f | 0x70 // version 7
	u[8] = u[8]&0x3f | 0x80 // variant 10
	return formatUUID(u), nil
}

// LogicalRunSpace is the UUID name space of logical run ids (RFC 9562):
// the UUID version 5 of the URL
// "https://github.com/databrew/databrew-stage/lineage#logical-run" in
// the URL name space.
const LogicalRunSpace = "148468a7-6622-5ebf-aa73-3c10efe7fa41"

// LogicalRunID returns the OpenLineage run id of the logical run runID (the
// --run-id its shards and its commit are given) of job (a config's name)
// in job namespace: the UUID version 5 (RFC 9562, SHA-1) of the name
// "NAMESPACE/JOB/RUNID" in LogicalRunSpace. Every shard and the commit,
// wherever they run, derive the same id without telling one another, so a
// lineage server pairs the shards' START with the commit's end event. (A
// job name and a run id hold no "/", so no two runs share a name.)
func LogicalRunID(namespace, job, runID string) string {
	return uuidV5(logicalRunSpace, namespace+"/"+job+"/"+runID)
}

// logicalRunSpace is LogicalRunSpace as bytes.
var logicalRunSpace = mustParseUUID(LogicalRunSpace)

// uuidV5 returns the UUID version 5 of name in the name space space.
func uuidV5(space [16]byte, name string) string {
	h := sha1.New()
	h.Write(space[:])
	h.Write([]byte(name))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // variant 10
	return formatUUID(u)
}

// formatUUID writes u in the 8-4-4-4-12 hex form.
func formatUUID(u [16]byte) string {
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// mustParseUUID parses a UUID in the 8-4-4-4-12 hex form.
func mustParseUUID(s string) [16]byte {
	var u [16]byte
	b, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil || len(b) != len(u) {
		panic(fmt.Sprintf("lineage: %q is not a UUID", s))
	}
	copy(u[:], b)
	return u
}
