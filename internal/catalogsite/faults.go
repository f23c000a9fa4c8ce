package catalogsite

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// FaultKind is what a matching Fault does to a request.
type FaultKind int

const (
	// FaultStatus answers Fault.Status (default 500) with a short error
	// page, and a Retry-After header when Fault.RetryAfter is set.
	FaultStatus FaultKind = iota
	// FaultTooMany answers 429 with a Retry-After header (Fault.RetryAfter,
	// default "1"). Use FaultStatus with Status 429 for a 429 without it.
	FaultTooMany
	// FaultHang holds the request for Fault.Hang and then answers normally;
	// with Hang 0 it holds it until the request's context ends (the client
	// gives up) and then drops the connection.
	FaultHang
	// FaultReset closes the connection with a TCP RST without writing a
	// response. Note that Go's http.Transport transparently retries an
	// idempotent request once when a reused keep-alive connection fails
	// before any response byte, so a reset aimed at a single ordinal may be
	// hidden by the retry (which gets the next ordinal); target a range or
	// a path to make resets visible to such clients.
	FaultReset
	// FaultStub answers 200 OK with exactly 200 bytes of plausible HTML,
	// like a site that is down but still answers 200.
	FaultStub
	// FaultTruncated answers 200 with a Content-Length larger than the body
	// it writes and then closes the connection, so the client sees an
	// unexpected EOF.
	FaultTruncated
	// FaultNotFound answers 404.
	FaultNotFound
	// FaultGone answers 410.
	FaultGone
	// FaultEmpty answers 200 with an empty body.
	FaultEmpty

	numFaultKinds
)

var faultKindNames = [numFaultKinds]string{
	"status", "too-many", "hang", "reset", "stub", "truncated", "not-found", "gone", "empty",
}

// String returns the kind's name, as accepted by ParseFaultKind.
func (k FaultKind) String() string {
	if k >= 0 && k < numFaultKinds {
		return faultKindNames[k]
	}
	return "FaultKind(" + strconv.Itoa(int(k)) + ")"
}

// ParseFaultKind returns the kind named name (see FaultKind.String).
func ParseFaultKind(name string) (FaultKind, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for k, n := range faultKindNames {
		if n == name {
			return FaultKind(k), true
		}
	}
	return 0, false
}

// Fault describes a fault to inject. A request matches when all the
// conditions that are set hold; the first matching fault in AddFault order
// applies. Requests for /robots.txt never match.
type Fault struct {
	// Kind is what the fault does.
	Kind FaultKind
	// From and To bound the request ordinal to [From, To); 0 leaves that
	// side unbounded.
	From, To int64
	// After and Until bound the time since the site's creation (or its last
	// Rebase) to [After, Until); 0 leaves that side unbounded.
	After, Until time.Duration
	// PathPrefix limits the fault to request paths with this prefix.
	PathPrefix string
	// Status is the status FaultStatus answers (default 500; statuses
	// below 200, 204 and 304 also become 500, since they carry no page).
	Status int
	// RetryAfter is the Retry-After header value for FaultTooMany and
	// FaultStatus, e.g. "1" or an HTTP date.
	RetryAfter string
	// Hang is how long FaultHang holds the request before answering
	// normally; 0 holds it until the request's context ends.
	Hang time.Duration
	// Match, when set, is an extra predicate the request must satisfy.
	Match func(ordinal int64, r *http.Request) bool
}

func (f *Fault) matches(ordinal int64, elapsed time.Duration, r *http.Request) bool {
	return (f.From == 0 || ordinal >= f.From) &&
		(f.To == 0 || ordinal < f.To) &&
		(f.After == 0 || elapsed >= f.After) &&
		(f.Until == 0 || elapsed < f.Until) &&
		strings.HasPrefix(r.URL.Path, f.PathPrefix) &&
		(f.Match == nil || f.Match(ordinal, r))
}

// AddFault appends f to the site's faults. It is safe while serving.
func (s *Site) AddFault(f Fault) {
	s.faultsMu.Lock()
	defer s.faultsMu.Unlock()
	var list []Fault
	if old := s.faults.Load(); old != nil {
		list = append(list, *old...)
	}
	list = append(list, f)
	s.faults.Store(&list)
}

// ClearFaults removes all faults.
func (s *Site) ClearFaults() {
	s.faultsMu.Lock()
	defer s.faultsMu.Unlock()
	s.faults.Store(nil)
}

// Rebase makes fault time windows (After, Until) count from now.
func (s *Site) Rebase() { s.origin.Store(int64(s.opts.Now().Sub(s.epoch))) }

// elapsed is the time since the origin of fault time windows.
func (s *Site) elapsed() time.Duration {
	return s.opts.Now().Sub(s.epoch) - time.Duration(s.origin.Load())
}

// matchFault returns the first fault matching the request, or nil.
func (s *Site) matchFault(ordinal int64, r *http.Request) *Fault {
	list := s.faults.Load()
	if list == nil {
		return nil
	}
	elapsed := s.elapsed()
	for i := range *list {
		if f := &(*list)[i]; f.matches(ordinal, elapsed, r) {
			return f
		}
	}
	return nil
}

// stubBody is the exactly 200-byte page FaultStub serves.
var stubBody = func() string {
	const head = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Maintenance</title></head><body><p>We are down for maintenance. Please check back soon.</p>"
	const tail = "</body></html>\n"
	return head + strings.Repeat(" ", 200-len(head)-len(tail)) + tail
}()

// serveFault applies f to the request. It reports whether the response is
// complete; false means the request is to be answered normally.
func (s *Site) serveFault(w http.ResponseWriter, r *http.Request, f *Fault) bool {
	switch f.Kind {
	case FaultStatus:
		status := f.Status
		if status < 200 || status > 999 || status == http.StatusNoContent || status == http.StatusNotModified {
			status = http.StatusInternalServerError
		}
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		s.writeError(w, r, status)
	case FaultTooMany:
		ra := f.RetryAfter
		if ra == "" {
			ra = "1"
		}
		w.Header().Set("Retry-After", ra)
		s.writeError(w, r, http.StatusTooManyRequests)
	case FaultHang:
		if !sleepCtx(r.Context(), f.Hang) {
			panic(http.ErrAbortHandler)
		}
		return false
	case FaultReset:
		resetConn(w)
	case FaultStub:
		h := w.Header()
		h["Content-Type"] = ctPlainHTML
		h["Content-Length"] = []string{strconv.Itoa(len(stubBody))}
		w.WriteHeader(http.StatusOK)
		writeBody(w, r, stubBody)
	case FaultTruncated:
		s.serveTruncated(w, r)
	case FaultNotFound:
		s.writeError(w, r, http.StatusNotFound)
	case FaultGone:
		s.writeError(w, r, http.StatusGone)
	case FaultEmpty:
		h := w.Header()
		h["Content-Type"] = ctPlainHTML
		h["Content-Length"] = []string{"0"}
		w.WriteHeader(http.StatusOK)
	default:
		s.writeError(w, r, http.StatusInternalServerError)
	}
	return true
}

// sleepCtx waits for d, or until ctx ends when d is 0. It reports whether
// the wait completed rather than ctx ending.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		<-ctx.Done()
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// resetConn closes the request's connection with a TCP RST. When the
// connection cannot be hijacked (HTTP/2, recorders) the response is
// aborted instead.
func resetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// serveTruncated declares the full length of the page the request would
// get (a filler page when that is not a 200), writes half of it and drops
// the connection.
func (s *Site) serveTruncated(w http.ResponseWriter, r *http.Request) {
	pb := getBuf()
	defer putBuf(pb)
	if s.render(pb, r.URL.Path) != http.StatusOK {
		pb.b = s.appendPrivatePage(pb.b[:0], r.URL.Path)
	}
	h := w.Header()
	h["Content-Type"] = ctPlainHTML
	h["Content-Length"] = []string{strconv.Itoa(len(pb.b))}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(pb.b[:len(pb.b)/2])
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	if conn, _, err := rc.Hijack(); err == nil {
		_ = conn.Close()
	}
}
