package dagsterpipes

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/dustin/go-humanize"
)

// maxContextBytes bounds what the bootstrap reads: a context file, and a
// bootstrap parameter once decoded. A context is a few kilobytes (asset
// keys, a partition key, a run id, extras).
const maxContextBytes = 4 << 20

// errNotRegular matches the error of a bootstrap path that is not a
// regular file.
var errNotRegular = errors.New("not a regular file")

// kindOf names what a file that is not a regular file is.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}

// regular returns an error wrapping errNotRegular, naming what the file is,
// unless fi is a regular file's.
func regular(fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("is %s, %w", kindOf(fi.Mode()), errNotRegular)
}

// readRegular reads the regular file at path, of at most limit bytes. A
// path that is not a regular file (a device such as /dev/zero, a named
// pipe, a folder) is never read: it is looked at before it is opened,
// opened without blocking (a named pipe without a writer would block the
// open for good), and looked at again once open.
func readRegular(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := sizedRegular(fi, limit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := sizedRegular(fi, limit); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("grew past %s while it was read; it may have at most that", humanize.IBytes(uint64(limit)))
	}
	return b, nil
}

// sizedRegular returns an error unless fi is a regular file's of at most
// limit bytes.
func sizedRegular(fi fs.FileInfo, limit int64) error {
	if err := regular(fi); err != nil {
		return err
	}
	if fi.Size() > limit {
		return fmt.Errorf("is %s; a Pipes context may have at most %s", humanize.IBytes(uint64(fi.Size())), humanize.IBytes(uint64(limit)))
	}
	return nil
}

// openAppend opens the regular file at path for appending, making it when
// it does not exist. Anything else there (a named pipe, with a reader or
// without, a device, a folder) is refused before a byte is written, and
// nothing waits on it: the open does not block.
func openAppend(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	switch {
	case err == nil:
		if err := regular(fi); err != nil {
			return nil, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NONBLOCK, 0o644)
	if errors.Is(err, syscall.ENXIO) {
		// A named pipe no one reads, made since the look.
		return nil, fmt.Errorf("is %s, %w", kindOf(fs.ModeNamedPipe), errNotRegular)
	}
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err == nil {
		err = regular(fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
