package stage

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/fetch"
	"github.com/databrew/databrew-stage/verdict"
)

// httpFetcher adapts fetch.Client to the engine's Fetcher, translating
// fetch errors into the result classes the stop rules count.
type httpFetcher struct {
	client *fetch.Client
}

func (f httpFetcher) Fetch(ctx context.Context, req crawl.Request) (*crawl.Response, error) {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	resp, err := f.client.Do(ctx, method, req.URL, req.Header, req.Body)
	if err != nil {
		return nil, fetchError(err)
	}
	return &crawl.Response{
		URL: resp.URL, FinalURL: resp.FinalURL, Status: resp.Status, Header: resp.Header,
		Body: resp.Body, Release: resp.Release,
		RedirectNotFollowed: resp.RedirectNotFollowed, Charset: resp.Charset,
	}, nil
}

// fetchError classifies a failed exchange: trouble with the site is a
// failure; an answer about one URL (too big, a redirect loop) is neutral.
func fetchError(err error) error {
	fe := &crawl.FetchError{Class: verdict.ClassFailure, Reason: connectionReason(err), Err: err}
	var e *fetch.Error
	if !errors.As(err, &e) {
		return fe
	}
	switch e.Kind {
	case fetch.KindCanceled:
		fe.Canceled, fe.Reason = true, "canceled"
	case fetch.KindTimeout:
		fe.Reason = verdict.ReasonTimeout
	case fetch.KindRefused:
		fe.Reason = verdict.ReasonRefused
	case fetch.KindReset:
		fe.Reason = verdict.ReasonReset
	case fetch.KindTruncated:
		fe.Reason = verdict.ReasonTruncated
	case fetch.KindTooLarge:
		fe.Class, fe.Reason = verdict.ClassNeutral, "body over max_body_bytes"
	case fetch.KindTooManyRedirects:
		fe.Class, fe.Reason = verdict.ClassNeutral, "too many redirects"
	}
	return fe
}

// connectionReason says why a connection failed in a few plain words,
// without the layers of Go error text around the cause ("dial tcp
// 127.0.0.1:1: connect: ...", "tls: failed to verify certificate: x509:
// ..."): a host name not found, a TLS handshake that failed, or another
// connection error and its cause.
func connectionReason(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		if dns.IsNotFound {
			return verdict.ReasonDNS + ": no such host"
		}
		return verdict.ReasonDNS + ": " + dns.Err
	}
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		alert    tls.AlertError
		record   tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &verify):
		return verdict.ReasonTLS + ": " + plainTLS(verify.Err)
	case errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid):
		return verdict.ReasonTLS + ": " + plainTLS(err)
	case errors.As(err, &alert):
		return verdict.ReasonTLS + ": the server sent the alert " + plainTLS(alert)
	case errors.As(err, &record):
		return verdict.ReasonTLS + ": the server does not speak TLS on that port"
	}
	var sys *os.SyscallError
	if errors.As(err, &sys) {
		return verdict.ReasonConnection + ": " + sys.Err.Error()
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return verdict.ReasonConnection + ": " + op.Err.Error()
	}
	return verdict.ReasonConnection
}

// plainTLS is a TLS or certificate error's text without the package
// prefixes Go puts before it.
func plainTLS(err error) string {
	s := err.Error()
	for _, p := range []string{"tls: failed to verify certificate: ", "tls: ", "x509: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}
