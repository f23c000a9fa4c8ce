package stage

import (
	"context"
	"errors"
	"net/http"

	"github.com/databrew/databrew-stage/crawl"
	"github.com/databrew/databrew-stage/fetch"
	"github.com/databrew/databrew-stage/verdict"
)

// httpFetcher adapts fetch.Client to the engine's Fetcher, translating
// fetch errors into the result classes the stop rules count.
type httpFetcher struct {
	client *fetch.Client
}

func (f httpFetcher) Fetch(ctx context.Context, url string, hdr http.Header) (*crawl.Response, error) {
	resp, err := f.client.Fetch(ctx, url, hdr)
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
	fe := &crawl.FetchError{Class: verdict.ClassFailure, Reason: "connection error", Err: err}
	var e *fetch.Error
	if !errors.As(err, &e) {
		return fe
	}
	switch e.Kind {
	case fetch.KindCanceled:
		fe.Canceled, fe.Reason = true, "canceled"
	case fetch.KindTimeout:
		fe.Reason = "timeout"
	case fetch.KindRefused:
		fe.Reason = "connection refused"
	case fetch.KindReset:
		fe.Reason = "connection reset"
	case fetch.KindTruncated:
		fe.Reason = "truncated body"
	case fetch.KindTooLarge:
		fe.Class, fe.Reason = verdict.ClassNeutral, "body over max_body_bytes"
	case fetch.KindTooManyRedirects:
		fe.Class, fe.Reason = verdict.ClassNeutral, "too many redirects"
	}
	return fe
}
