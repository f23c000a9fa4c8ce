// Package stallproxy is a TCP proxy for tests of a server that stops
// answering. It forwards each connection to a backend byte for byte
// until it is told to stall: frozen, it still accepts connections and
// reads what clients send, but forwards nothing, so no request is ever
// answered; stalling bodies, it forwards the head of the next response on
// each connection and then nothing. A connection that stalled stays
// stalled; Thaw makes new requests pass again (a client that gave up on a
// stalled connection opens a new one). It can also lose one answer: the
// backend gets the request and answers, and the client's connection is
// reset instead.
package stallproxy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/url"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
)

// mode is what the proxy does with new traffic.
type mode int32

const (
	pass        mode = iota // forward both ways
	frozen                  // forward nothing from clients
	stallBodies             // forward a response's head, then nothing
)

// Proxy is one running proxy on 127.0.0.1. Its methods may be called
// from any goroutine.
type Proxy struct {
	ln      net.Listener
	backend string
	mode    atomic.Int32
	// freezeOn, when set, freezes the proxy as a client sends what it
	// matches.
	freezeOn atomic.Pointer[regexp.Regexp]
	// stalls gets a value as a connection starts dropping what its
	// client sends; stalled counts such connections.
	stalls  chan struct{}
	stalled atomic.Int64
	// loseOn, when set, loses the answer to the next request it matches.
	loseOn atomic.Pointer[regexp.Regexp]

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

// Start runs a proxy in front of backend (host:port) on a free port of
// 127.0.0.1, forwarding, and closes it and every connection when the
// test ends.
func Start(t testing.TB, backend string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("stallproxy: %v", err)
	}
	p := &Proxy{ln: ln, backend: backend, conns: map[net.Conn]bool{}, stalls: make(chan struct{}, 1)}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's address, 127.0.0.1:PORT.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Endpoint is the proxy's base URL, http://127.0.0.1:PORT.
func (p *Proxy) Endpoint() string { return "http://" + p.Addr() }

// Via is rawURL, an output URL whose endpoint parameter names the
// backend, with the proxy as its endpoint instead.
func (p *Proxy) Via(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(err)
	}
	q := u.Query()
	q.Set("endpoint", p.Endpoint())
	u.RawQuery = q.Encode()
	return u.String()
}

// Freeze makes the proxy accept connections and answer nothing: no byte
// a client sends from now on reaches the backend.
func (p *Proxy) Freeze() { p.mode.Store(int32(frozen)) }

// FreezeOn freezes the proxy as soon as a client sends a chunk that the
// regular expression pattern matches (in multi-line mode, so ^ matches
// where a request line starts), before that chunk is forwarded.
func (p *Proxy) FreezeOn(pattern string) {
	p.freezeOn.Store(regexp.MustCompile("(?m)" + pattern))
}

// StallBodies makes the next response on every connection stop after its
// head (status line and headers): the body never comes. Call it while no
// request is in flight.
func (p *Proxy) StallBodies() { p.mode.Store(int32(stallBodies)) }

// LoseAnswerOn loses the answer to the next request a client sends in a
// chunk that the regular expression pattern matches (as FreezeOn reads
// it): the request reaches the backend, which acts on it, and as its
// answer comes the client's connection is reset, as when a network drops
// it. Only that one answer is lost.
func (p *Proxy) LoseAnswerOn(pattern string) {
	p.loseOn.Store(regexp.MustCompile("(?m)" + pattern))
}

// Stalls gets a value when a client's request is dropped while the proxy
// is frozen (at most one waits to be received): a test can act while a
// request hangs.
func (p *Proxy) Stalls() <-chan struct{} { return p.stalls }

// Stalled is the number of requests the proxy dropped while frozen (each
// on a connection of its own: a client that gives up on a request closes
// its connection).
func (p *Proxy) Stalled() int { return int(p.stalled.Load()) }

// Thaw forwards new connections again.
func (p *Proxy) Thaw() {
	p.freezeOn.Store(nil)
	p.loseOn.Store(nil)
	p.mode.Store(int32(pass))
}

// Close stops accepting, closes every connection, and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	_ = p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// track remembers c so Close closes it; false when the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = true
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve forwards one client connection to a new backend connection.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client)
	backend, err := net.Dial("tcp", p.backend)
	if err != nil {
		return
	}
	if !p.track(backend) {
		return
	}
	defer p.untrack(backend)
	done := make(chan struct{})
	var lose atomic.Bool
	go func() {
		defer close(done)
		p.fromBackend(client, backend, &lose)
	}()
	p.fromClient(client, backend, &lose)
	// The client is gone: so is the backend connection.
	_ = backend.Close()
	<-done
}

// fromClient forwards what the client sends until the proxy freezes;
// from then on it reads and drops it, until the client closes.
func (p *Proxy) fromClient(client, backend net.Conn, lose *atomic.Bool) {
	buf := make([]byte, 32<<10)
	stalled := false
	for {
		n, err := client.Read(buf)
		if n > 0 && !stalled {
			if re := p.freezeOn.Load(); re != nil && re.Match(buf[:n]) {
				p.Freeze()
			}
			if re := p.loseOn.Load(); re != nil && re.Match(buf[:n]) && p.loseOn.CompareAndSwap(re, nil) {
				lose.Store(true)
			}
			if mode(p.mode.Load()) == frozen {
				stalled = true
				p.stalled.Add(1)
				select {
				case p.stalls <- struct{}{}:
				default:
				}
			} else if _, werr := backend.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// fromBackend forwards what the backend answers; once the proxy stalls
// bodies it forwards the head of the response being read and drops the
// rest, until the backend closes. An answer to be lost resets the
// client's connection instead.
func (p *Proxy) fromBackend(client, backend net.Conn, lose *atomic.Bool) {
	buf := make([]byte, 32<<10)
	var head []byte // the response head seen so far, while stalling
	stalled := false
	for {
		n, err := backend.Read(buf)
		if n > 0 && lose.Load() {
			if tc, ok := client.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, not an orderly close
			}
			_ = client.Close()
			return
		}
		if n > 0 && !stalled {
			out := buf[:n]
			if mode(p.mode.Load()) == stallBodies {
				head = append(head, out...)
				if i := bytes.Index(head, []byte("\r\n\r\n")); i >= 0 {
					// Forward up to the end of the head, then nothing.
					end := len(out) - (len(head) - (i + 4))
					out, stalled = out[:end], true
				}
			}
			if _, werr := client.Write(out); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) && !stalled {
				_ = client.Close() // the backend closed after its answer
			}
			// A stalled client waits on, until it gives up.
			return
		}
	}
}
