package lineage

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
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
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}
