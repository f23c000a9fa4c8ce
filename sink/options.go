package sink

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Format is the file format of a FileSet's part files.
type Format string

// The formats a FileSet writes.
const (
	// FormatParquet writes Parquet files (.parquet), zstd-compressed.
	FormatParquet Format = "parquet"
	// FormatArrow writes Arrow IPC stream files (.arrows), zstd-compressed.
	FormatArrow Format = "arrow"
)

// Ext returns the file name extension of the format, with its dot.
func (f Format) Ext() string {
	switch f {
	case FormatParquet:
		return ".parquet"
	case FormatArrow:
		return ".arrows"
	}
	return ""
}

// The defaults of Options.
const (
	// DefaultRowGroupRows is the default number of rows per Parquet row
	// group or Arrow record batch.
	DefaultRowGroupRows = 65536
	// DefaultMaxFileRows is the default number of rows per part file.
	DefaultMaxFileRows = 1_000_000
)

// Options configures a FileSet.
type Options struct {
	// Format is the file format.
	Format Format
	// RowGroupRows is the number of rows per Parquet row group or Arrow
	// record batch; 0 means DefaultRowGroupRows.
	RowGroupRows int
	// MaxFileRows starts a new part file after this many rows; 0 means
	// DefaultMaxFileRows.
	MaxFileRows int64
	// Metadata is stored as the file's key/value metadata (Parquet) or
	// schema metadata (Arrow).
	Metadata map[string]string

	// alloc allocates Arrow buffers; nil means memory.DefaultAllocator.
	alloc memory.Allocator
}

// withDefaults returns o with zero sizes replaced by the defaults, or an
// error for an unknown format or a negative size.
func (o Options) withDefaults() (Options, error) {
	if o.Format.Ext() == "" {
		return o, fmt.Errorf("unknown format %q", o.Format)
	}
	if o.RowGroupRows < 0 || o.MaxFileRows < 0 {
		return o, fmt.Errorf("negative RowGroupRows %d or MaxFileRows %d", o.RowGroupRows, o.MaxFileRows)
	}
	if o.RowGroupRows == 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	if o.MaxFileRows == 0 {
		o.MaxFileRows = DefaultMaxFileRows
	}
	return o, nil
}
