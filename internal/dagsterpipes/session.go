package dagsterpipes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// ProtocolVersion is the Pipes protocol version the messages carry.
const ProtocolVersion = "0.1"

// Severity is an asset check's severity.
type Severity string

// The severities an asset check can have.
const (
	SeverityWarn  Severity = "WARN"
	SeverityError Severity = "ERROR"
)

// Session is an open Pipes session: the context Dagster passed and the
// channel messages go to. Its methods are safe for concurrent use; a
// message that cannot be written is remembered and returned by Close, as
// the run goes on without its orchestrator's view of it.
type Session struct {
	Context Context

	mu     sync.Mutex
	w      io.Writer
	file   *os.File // the messages file, when messages go to one
	closed bool
	err    error
}

// messageParams says where messages go.
type messageParams struct {
	Path  *string `json:"path"`
	Stdio *string `json:"stdio"`
}

// Open starts a session when the process was launched by Dagster (getenv
// finds both bootstrap parameters), and returns nil, nil when it was not.
// stdout and stderr are the streams {"stdio": ...} names. It writes the
// "opened" message.
func Open(getenv func(string) string, stdout, stderr io.Writer) (*Session, error) {
	ctxParam, msgParam := getenv(ContextEnv), getenv(MessagesEnv)
	if ctxParam == "" && msgParam == "" {
		return nil, nil
	}
	if ctxParam == "" || msgParam == "" {
		return nil, fmt.Errorf("dagster pipes: %s and %s must be set together", ContextEnv, MessagesEnv)
	}
	c, err := loadContext(ctxParam)
	if err != nil {
		return nil, fmt.Errorf("dagster pipes: %w", err)
	}
	var p messageParams
	if err := decodeParam(msgParam, &p); err != nil {
		return nil, fmt.Errorf("dagster pipes: %s: %w", MessagesEnv, err)
	}
	s := &Session{Context: c}
	switch {
	case p.Path != nil:
		f, err := openAppend(*p.Path)
		if errors.Is(err, errNotRegular) {
			return nil, fmt.Errorf(`dagster pipes: %s: the messages path %s %w: messages are appended to a regular file, which Dagster's `+
				`file message reader reads; to write them to a stream, give {"stdio": "stderr"} (or "stdout")`, MessagesEnv, *p.Path, err)
		}
		if err != nil {
			return nil, fmt.Errorf("dagster pipes: %s: open the messages file %s: %w", MessagesEnv, *p.Path, err)
		}
		s.w, s.file = f, f
	case p.Stdio != nil && *p.Stdio == "stdout":
		s.w = stdout
	case p.Stdio != nil && *p.Stdio == "stderr":
		s.w = stderr
	case p.Stdio != nil:
		return nil, fmt.Errorf(`dagster pipes: %s: "stdio" is %q, not "stdout" or "stderr"`, MessagesEnv, *p.Stdio)
	default:
		return nil, fmt.Errorf(`dagster pipes: %s: the parameters hold neither "path" nor "stdio"`, MessagesEnv)
	}
	s.write("opened", map[string]any{"extras": map[string]any{}})
	return s, nil
}

// message is the protocol's envelope.
type message struct {
	Version string `json:"__dagster_pipes_version"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// write sends one message as one line in one write, so messages from
// several goroutines never interleave.
func (s *Session) write(method string, params any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	line, err := json.Marshal(message{Version: ProtocolVersion, Method: method, Params: params})
	if err == nil {
		_, err = s.w.Write(append(line, '\n'))
	}
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("dagster pipes: write %s message: %w", method, err)
	}
}

// Log sends a log message; level is one of DEBUG, INFO, WARNING, ERROR,
// CRITICAL.
func (s *Session) Log(level, msg string) {
	s.write("log", map[string]any{"message": msg, "level": level})
}

// Metadata is a message's metadata: each value with its Dagster type.
type Metadata map[string]Value

// Value is a metadata value: the raw value and its Dagster type ("text",
// "int", "float", "bool", "path", "url", "json", "timestamp", ...).
type Value struct {
	Raw  any    `json:"raw_value"`
	Type string `json:"type"`
}

// Text is a text metadata value.
func Text(s string) Value { return Value{Raw: s, Type: "text"} }

// Int is an integer metadata value.
func Int(n int) Value { return Value{Raw: n, Type: "int"} }

// Int64 is an integer metadata value of 64 bits, such as an Iceberg
// snapshot id.
func Int64(n int64) Value { return Value{Raw: n, Type: "int"} }

// Path is a path metadata value.
func Path(p string) Value { return Value{Raw: p, Type: "path"} }

// Bool is a boolean metadata value.
func Bool(b bool) Value { return Value{Raw: b, Type: "bool"} }

// JSON is a JSON metadata value.
func JSON(v any) Value { return Value{Raw: v, Type: "json"} }

// ReportMaterialization reports that the asset was materialized, with a
// data version (empty: none) and metadata.
func (s *Session) ReportMaterialization(assetKey, dataVersion string, md Metadata) {
	var version any
	if dataVersion != "" {
		version = dataVersion
	}
	s.write("report_asset_materialization", map[string]any{"asset_key": assetKey, "data_version": version, "metadata": md})
}

// ReportCheck reports an asset check's result.
func (s *Session) ReportCheck(assetKey, checkName string, passed bool, severity Severity, md Metadata) {
	s.write("report_asset_check", map[string]any{"asset_key": assetKey, "check_name": checkName,
		"passed": passed, "severity": severity, "metadata": md})
}

// ReportCustomMessage sends a custom message: any JSON payload, which
// Dagster's side keeps for the code that launched the process
// (get_custom_messages of its Pipes message handler) and records nothing
// of on its own.
func (s *Session) ReportCustomMessage(payload any) {
	s.write("report_custom_message", map[string]any{"payload": payload})
}

// Close sends the "closed" message and closes the messages file; it
// returns the first error any message met.
func (s *Session) Close() error {
	s.write("closed", map[string]any{})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var err error
	if s.file != nil {
		err = s.file.Close()
	}
	return errors.Join(s.err, err)
}
