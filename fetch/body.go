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

// bigBody is the length past which a body leaves the pool and grows by
// about a quarter at a time rather than doubling as a bytes.Buffer does,
// which can leave half of what it holds unused.
const bigBody = maxPooledBuffer

// readBody reads at most max+1 bytes of resp's body: into a pooled
// buffer up to bigBody, and a longer body on outside the pool, in a slice
// of its Content-Length or grown by about a quarter at a time. tooLarge
// reports that the body exceeded max; the body is then nil. On error the
// buffer has already been returned to the pool.
func readBody(resp *http.Response, max int64) (buf *bytes.Buffer, data []byte, tooLarge bool, err error) {
	limit := max + 1
	buf = getBuffer()
	if n := resp.ContentLength; n > 0 && n < limit {
		buf.Grow(int(min(n, bigBody)) + bytes.MinRead)
	}
	lr := io.LimitedReader{R: resp.Body, N: min(limit, bigBody)}
	if _, err := buf.ReadFrom(&lr); err != nil {
		putBuffer(buf)
		return nil, nil, false, fmt.Errorf("read body: %w", err)
	}
	if lr.N > 0 || int64(buf.Len()) == limit {
		return buf, buf.Bytes(), int64(buf.Len()) == limit, nil
	}
	room := int64(2 * bigBody)
	if n := resp.ContentLength; n > 0 && n < limit {
		room = n + 1
	}
	data = make([]byte, buf.Len(), room)
	copy(data, buf.Bytes())
	putBuffer(buf)
	lr.N = limit - int64(len(data))
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := lr.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, false, fmt.Errorf("read body: %w", err)
		}
	}
	if int64(len(data)) == limit {
		return nil, nil, true, nil
	}
	return nil, data, false, nil
}

func errBodyTooLarge(max int64) error {
	return fmt.Errorf("body exceeds %d bytes", max)
}
