package sink

import (
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// pageZstd compresses Parquet pages. parquet-go's own zstd codec keeps
// the library's default 8 MiB window, for which every pooled encoder
// holds a 16 MiB history buffer; a page is about pageBytes, so a window of
// that size loses nothing and one shared encoder serves every worker.
var pageZstd = &zstdCodec{level: zstd.SpeedFastest, window: pageBytes}

// zstdCodec is a parquet-go compress.Codec for ZSTD; its methods are safe
// for concurrent use.
type zstdCodec struct {
	level  zstd.EncoderLevel
	window int

	encOnce sync.Once
	enc     *zstd.Encoder
	encErr  error
	decOnce sync.Once
	dec     *zstd.Decoder
	decErr  error
}

// String returns the codec name.
func (c *zstdCodec) String() string { return "ZSTD" }

// CompressionCodec returns the Parquet codec id.
func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Encode compresses src into dst as one zstd frame.
func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	c.encOnce.Do(func() {
		c.enc, c.encErr = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(c.level),
			zstd.WithWindowSize(c.window),
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithZeroFrames(true),
			zstd.WithEncoderCRC(false))
	})
	if c.encErr != nil {
		return dst[:0], c.encErr
	}
	return c.enc.EncodeAll(src, dst[:0]), nil
}

// Decode decompresses src into dst.
func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) {
	c.decOnce.Do(func() {
		c.dec, c.decErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
	})
	if c.decErr != nil {
		return dst[:0], c.decErr
	}
	return c.dec.DecodeAll(src, dst[:0])
}
