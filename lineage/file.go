package lineage

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// FileTransport appends each event to a file as one line of JSON (JSON
// Lines). The file is opened for each event with O_APPEND and written with
// one write, so runs and processes that share the file add whole lines.
type FileTransport struct {
	Path string
}

// String returns the file's path.
func (f FileTransport) String() string { return f.Path }

// Send appends the event and a newline. Errors do not repeat the path.
func (f FileTransport) Send(_ context.Context, event []byte) error {
	file, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open: %w", withoutPath(err))
	}
	line := make([]byte, 0, len(event)+1)
	line = append(append(line, event...), '\n')
	if _, err := file.Write(line); err != nil {
		_ = file.Close()
		return fmt.Errorf("append: %w", withoutPath(err))
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("close: %w", withoutPath(err))
	}
	return nil
}

// withoutPath drops the path from an *os.PathError, which DeliveryError
// names already.
func withoutPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
