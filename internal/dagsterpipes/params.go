package dagsterpipes

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"

	"github.com/dustin/go-humanize"
)

// The environment variables that carry the bootstrap parameters.
const (
	ContextEnv  = "DAGSTER_PIPES_CONTEXT"
	MessagesEnv = "DAGSTER_PIPES_MESSAGES"
)

// EncodeParam encodes a bootstrap parameter as Dagster does:
// base64(zlib(JSON)). The stage only decodes them; tests and programs
// that play the orchestrator's part encode them.
func EncodeParam(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode pipes parameter: %w", err)
	}
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		return "", fmt.Errorf("encode pipes parameter: %w", err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("encode pipes parameter: %w", err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// decodeParam decodes a bootstrap parameter into v. What it decodes to
// may have at most maxContextBytes: a parameter of a few kilobytes can
// inflate to a gigabyte.
func decodeParam(s string, v any) error {
	if len(s) > base64.StdEncoding.EncodedLen(maxContextBytes) {
		return fmt.Errorf("it is %s long; a Pipes parameter may have at most %s", humanize.IBytes(uint64(len(s))),
			humanize.IBytes(uint64(base64.StdEncoding.EncodedLen(maxContextBytes))))
	}
	compressed, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("not base64: %w", err)
	}
	zr, err := zlib.NewReader(bytes.NewReader(compressed))
	if err != nil {
		return fmt.Errorf("not zlib data: %w", err)
	}
	defer zr.Close()
	raw, err := io.ReadAll(io.LimitReader(zr, maxContextBytes+1))
	if err != nil {
		return fmt.Errorf("not zlib data: %w", err)
	}
	if len(raw) > maxContextBytes {
		return fmt.Errorf("it decodes to more than %s; a Pipes parameter may have at most that", humanize.IBytes(maxContextBytes))
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	return nil
}
