package fetch

import (
	"bytes"
	"context"
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

// bigBody is the length past which a body is big: it leaves the pool and
// counts against Config.BodyBudget, and grows by about a quarter at a
// time rather than doubling as a bytes.Buffer does, which can leave half
// of what it holds unused.
const bigBody = maxPooledBuffer

// body is a response body read into memory.
type body struct {
	buf  *bytes.Buffer // the pooled buffer of a body up to bigBody, else nil
	data []byte
	// held is the share of the body budget the body holds until its
	// Response is released.
	held     int64
	tooLarge bool // the body exceeded MaxBodyBytes; nothing is held
}

// readBody reads at most MaxBodyBytes+1 bytes of resp's body: into a
// pooled buffer up to bigBody; a longer body first waits for its share of
// the body budget (its Content-Length, else MaxBodyBytes+1), on ctx and
// with dl paused, and is then read on outside the pool. On error, or when
// the body is too large, nothing is held.
func (c *Client) readBody(ctx context.Context, resp *http.Response, dl *deadline) (body, error) {
	limit := c.cfg.MaxBodyBytes + 1
	buf := getBuffer()
	if n := resp.ContentLength; n > 0 && n < limit {
		buf.Grow(int(min(n, bigBody)) + bytes.MinRead)
	}
	lr := io.LimitedReader{R: resp.Body, N: min(limit, bigBody)}
	if _, err := buf.ReadFrom(&lr); err != nil {
		putBuffer(buf)
		return body{}, fmt.Errorf("read body: %w", err)
	}
	if lr.N > 0 || int64(buf.Len()) == limit {
		return body{buf: buf, data: buf.Bytes(), tooLarge: int64(buf.Len()) == limit}, nil
	}
	size, room := limit, int64(2*bigBody)
	if n := resp.ContentLength; n > 0 && n < limit {
		size, room = n, n+1
	}
	held, err := c.hold(ctx, size, dl)
	if err != nil {
		putBuffer(buf)
		return body{}, err
	}
	data := make([]byte, buf.Len(), room)
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
			c.release(held)
			return body{}, fmt.Errorf("read body: %w", err)
		}
	}
	if int64(len(data)) == limit {
		c.release(held)
		return body{tooLarge: true}, nil
	}
	return body{data: data, held: held}, nil
}

// hold waits for size bytes of the body budget (at most the whole
// budget), with the request's deadline paused meanwhile, and returns what
// it holds: 0 without a budget.
func (c *Client) hold(ctx context.Context, size int64, dl *deadline) (int64, error) {
	if c.budget == nil {
		return 0, nil
	}
	size = min(size, c.cfg.BodyBudget)
	if c.budget.TryAcquire(size) {
		return size, nil
	}
	if !dl.pause() {
		return 0, errTimeout
	}
	err := c.budget.Acquire(ctx, size)
	dl.resume()
	if err != nil {
		return 0, fmt.Errorf("wait for the body budget: %w", err)
	}
	return size, nil
}

// release gives back what a body held of the budget.
func (c *Client) release(held int64) {
	if held > 0 {
		c.budget.Release(held)
	}
}

func errBodyTooLarge(max int64) error {
	return fmt.Errorf("body exceeds %d bytes", max)
}
