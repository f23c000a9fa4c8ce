package fetch

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"syscall"
)

// Kind classifies a fetch failure.
type Kind string

// The kinds of failure a Fetch reports.
const (
	// KindTimeout means the per-request timeout expired or the network timed out.
	KindTimeout Kind = "timeout"
	// KindRefused means the server refused the connection.
	KindRefused Kind = "refused"
	// KindReset means the server reset the connection, or closed it before
	// sending a response.
	KindReset Kind = "reset"
	// KindTruncated means the body ended early or its gzip stream was broken.
	KindTruncated Kind = "truncated"
	// KindTooLarge means the body exceeded Config.MaxBodyBytes.
	KindTooLarge Kind = "too_large"
	// KindTooManyRedirects means the redirect chain exceeded Config.MaxRedirects.
	KindTooManyRedirects Kind = "too_many_redirects"
	// KindCanceled means the caller's context was cancelled.
	KindCanceled Kind = "canceled"
	// KindConnection means any other failure (DNS, TLS, bad URL, unsupported scheme).
	KindConnection Kind = "connection"
)

// Error is the error returned by Client.Fetch.
type Error struct {
	Kind Kind   // what went wrong
	URL  string // the URL as requested
	Err  error  // the underlying cause
}

// Error formats the failure as "fetch URL: kind: cause".
func (e *Error) Error() string {
	msg := "fetch " + e.URL + ": " + string(e.Kind)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of the first *Error in err's chain, or "" if none.
func KindOf(err error) Kind {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Kind
	}
	return ""
}

var (
	errTooManyRedirects = errors.New("too many redirects")
	errTimeout          = errors.New("request timeout")
)

// classify turns an error from the exchange into an *Error. parent is the
// caller's context; req is the per-request context derived from it.
// inBody reports whether err happened while reading the response body.
func classify(parent, req context.Context, rawURL string, err error, inBody bool) *Error {
	e := &Error{URL: rawURL, Err: unwrapURLError(err)}
	switch {
	case parent.Err() != nil:
		e.Kind, e.Err = KindCanceled, context.Cause(parent)
	case errors.Is(err, errTooManyRedirects):
		e.Kind = KindTooManyRedirects
	case context.Cause(req) == errTimeout:
		e.Kind, e.Err = KindTimeout, context.DeadlineExceeded
	case isTimeout(err):
		e.Kind = KindTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Kind = KindRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED):
		e.Kind = KindReset
	case inBody:
		e.Kind = KindTruncated
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		e.Kind = KindReset
	default:
		e.Kind = KindConnection
	}
	return e
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// unwrapURLError drops the *url.Error layer, whose message repeats the URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}
