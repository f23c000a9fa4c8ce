package objstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"gocloud.dev/gcerrors"
)

// ErrUnusable is wrapped by every error of Preflight that says the output
// cannot be used (as opposed to a cancelled context): the bucket is
// missing, the credentials are wrong, access is denied, the endpoint does
// not answer, or the store does not honor create-only writes. Each such
// error is an *UnusableError, whose Kind tells which.
var ErrUnusable = errors.New("output unusable")

// The kinds of unusable output; an *UnusableError wraps one of them.
var (
	// ErrNoBucket: the bucket (or container) does not exist.
	ErrNoBucket = errors.New("bucket does not exist")
	// ErrCredentials: no credentials were found, or the store rejected
	// them (unknown access key, wrong secret, expired token).
	ErrCredentials = errors.New("no usable credentials")
	// ErrDenied: the credentials are valid but lack a permission.
	ErrDenied = errors.New("access denied")
	// ErrUnreachable: the endpoint could not be reached.
	ErrUnreachable = errors.New("endpoint unreachable")
	// ErrNotCreateOnly: the store overwrote an object a create-only write
	// (If-None-Match: *) should have left alone, so exactly-once
	// publishing cannot be guaranteed on it.
	ErrNotCreateOnly = errors.New("create-only writes not honored")
	// ErrOther: any other failure of a preflight step.
	ErrOther = errors.New("preflight failed")
)

// UnusableError says why an output cannot be used.
type UnusableError struct {
	// URL is the output as configured.
	URL string
	// Kind is one of ErrNoBucket, ErrCredentials, ErrDenied,
	// ErrUnreachable, ErrNotCreateOnly and ErrOther.
	Kind error
	// Reason is a sentence for a person: what is wrong and what to check.
	Reason string
	// Err is the store's error, if any.
	Err error
}

// Error names the output, the reason and the first line of the store's
// error, so that it fits a run's summary line: Azure's SDK, for one,
// follows its first line with the whole answer, a dozen lines of
// headers and XML. Err holds all of it (see Detail).
func (e *UnusableError) Error() string {
	msg := fmt.Sprintf("output %s: %s", e.URL, e.Reason)
	if e.Err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(e.Err.Error()), "\n")
		msg += ": " + strings.TrimSpace(first)
	}
	return msg
}

// Detail is the store's whole error, as Error shortens it to one line,
// for a debug log; "" when there is none.
func (e *UnusableError) Detail() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

// Unwrap gives ErrUnusable, the Kind and the store's error to errors.Is
// and errors.As.
func (e *UnusableError) Unwrap() []error {
	errs := []error{ErrUnusable, e.Kind}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// unusable classifies err, the failure of a preflight step ("list the
// bucket", "write a probe object", ...). Preflight's own timeout, and a
// request's (ErrTimeout), is an unreachable store; a cancelled or expired context of the caller's is
// returned as it is, wrapped with the output and the step: that is the
// caller's doing, not the output's.
func (t *Target) unusable(ctx context.Context, step string, err error) error {
	if errors.Is(context.Cause(ctx), errPreflightTimeout) {
		return &UnusableError{URL: t.url, Kind: ErrUnreachable,
			Reason: fmt.Sprintf("%s: no answer within %v", step, preflightTimeout), Err: err}
	}
	if errors.Is(err, ErrTimeout) && ctx.Err() == nil {
		// The request's own time limit: err names the store and the limit.
		return &UnusableError{URL: t.url, Kind: ErrUnreachable, Reason: step, Err: err}
	}
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("output %s: %s: %w", t.url, step, err)
	}
	reason, kind := t.classify(err)
	return &UnusableError{URL: t.url, Kind: kind, Reason: step + ": " + reason, Err: err}
}

// classify tells why a request failed, from the S3 or Azure error code,
// gocloud's error code, or the transport's error.
func (t *Target) classify(err error) (reason string, kind error) {
	if reason, kind, ok := t.classifyAzure(err); ok {
		return reason, kind
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch code := ae.ErrorCode(); code {
		case "NoSuchBucket":
			return fmt.Sprintf("bucket %q does not exist", t.name), ErrNoBucket
		case "SignatureDoesNotMatch":
			return "the secret key does not match the access key (SignatureDoesNotMatch): check AWS_SECRET_ACCESS_KEY or the profile's credentials", ErrCredentials
		case "InvalidAccessKeyId", "XAdminUserNotFound": // versitygw answers the latter, with a 404
			return fmt.Sprintf("the store does not know the access key (%s): check AWS_ACCESS_KEY_ID or the profile's credentials", code), ErrCredentials
		case "ExpiredToken", "TokenRefreshRequired", "InvalidToken", "InvalidClientTokenId":
			return fmt.Sprintf("the session token is expired or invalid (%s): refresh the credentials", code), ErrCredentials
		case "AccessDenied", "Forbidden", "AllAccessDisabled", "AccountProblem":
			return fmt.Sprintf("access denied (%s): the credentials lack a permission on bucket %q", code, t.name), ErrDenied
		}
		var re *smithyhttp.ResponseError
		if errors.As(err, &re) {
			switch re.HTTPStatusCode() {
			case http.StatusUnauthorized:
				return fmt.Sprintf("the store rejected the credentials (%s)", ae.ErrorCode()), ErrCredentials
			case http.StatusForbidden:
				return fmt.Sprintf("access denied (%s): the credentials lack a permission on bucket %q", ae.ErrorCode(), t.name), ErrDenied
			}
		}
	}
	var se *v4.SigningError
	if errors.As(err, &se) || strings.Contains(err.Error(), "get identity:") ||
		strings.Contains(err.Error(), "failed to retrieve credentials") ||
		strings.Contains(err.Error(), "failed to refresh cached credentials") {
		return "no credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE", ErrCredentials
	}
	if unreachable(err) {
		where := "the store"
		if t.scheme == "s3" {
			where = t.storeName()
		}
		return "cannot reach " + where, ErrUnreachable
	}
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		return fmt.Sprintf("bucket %q does not exist", t.name), ErrNoBucket
	case gcerrors.PermissionDenied:
		return fmt.Sprintf("access denied: the credentials lack a permission on bucket %q", t.name), ErrDenied
	}
	return "the store failed", ErrOther
}

// unreachable reports whether err is a failure to connect or to resolve
// the endpoint's name.
func unreachable(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	var send *smithyhttp.RequestSendError
	var ue *url.Error
	return errors.As(err, &dns) || errors.As(err, &op) || errors.As(err, &send) ||
		errors.As(err, &ue) || errors.Is(err, syscall.ECONNREFUSED)
}

// endpoint is the S3 endpoint the URL names, if any.
func (t *Target) endpoint() string { return t.query().Get("endpoint") }

// query is the output URL's query.
func (t *Target) query() url.Values {
	u, err := url.Parse(t.url)
	if err != nil {
		return nil
	}
	return u.Query()
}
