package fetch

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// maxPooledBuffer is the largest buffer capacity returned to the pool, so a
// rare huge page does not pin its memory for the life of the process.
const maxPooledBuffer = 1 << 20

var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuffer() *bytes.Buffer {
	b := bufferPool.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

func putBuffer(b *bytes.Buffer) {
	if b != nil && b.Cap() <= maxPooledBuffer {
		bufferPool.Put(b)
	}
}

// readBody reads at most max+1 bytes of resp's body into a pooled buffer.
// tooLarge reports that the body exceeded max. On error the buffer has
// already been returned to the pool.
func readBody(resp *http.Response, max int64) (buf *bytes.Buffer, tooLarge bool, err error) {
	buf = getBuffer()
	if n := resp.ContentLength; n > 0 && n <= max {
		buf.Grow(int(n) + bytes.MinRead)
	}
	lr := io.LimitedReader{R: resp.Body, N: max + 1}
	if _, err := buf.ReadFrom(&lr); err != nil {
		putBuffer(buf)
		return nil, false, fmt.Errorf("read body: %w", err)
	}
	return buf, int64(buf.Len()) > max, nil
}

func errBodyTooLarge(max int64) error {
	return fmt.Errorf("body exceeds %d bytes", max)
}
