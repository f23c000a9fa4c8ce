package fetch

import (
	"net/http"
	"net/url"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"120", 2 * time.Minute, true},
		{" 0 ", 0, true},
		{"-5", 0, true},
		{"99999999999999999", time.Duration(1<<63-1) / time.Second * time.Second, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"Sat, 01 Mar 2025 11:00:00 GMT", 0, true},
		{"Saturday, 01-Mar-25 12:00:30 GMT", 30 * time.Second, true},
		{"soon", 0, false},
		{"1.5", 0, false},
		{"", 0, false},
	}
	for _, tc := range cases {
		r := &Response{Header: http.Header{}}
		if tc.value != "" {
			r.Header.Set("Retry-After", tc.value)
		}
		got, ok := r.RetryAfter(now)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("RetryAfter(%q) = %v, %v; want %v, %v", tc.value, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestRedirectTarget(t *testing.T) {
	final, _ := url.Parse("http://example.com/dir/page")
	cases := []struct {
		status   int
		location string
		want     string
	}{
		{301, "other", "http://example.com/dir/other"},
		{302, "https://elsewhere.org/x?y=1", "https://elsewhere.org/x?y=1"},
		{308, "/top", "http://example.com/top"},
		{302, "", ""},
		{200, "/top", ""},
		{302, "http://[::1", ""},
	}
	for _, tc := range cases {
		r := &Response{Status: tc.status, FinalURL: final, Header: http.Header{}}
		if tc.location != "" {
			r.Header.Set("Location", tc.location)
		}
		u, ok := r.RedirectTarget()
		if got := ""; ok {
			got = u.String()
			if got != tc.want {
				t.Errorf("RedirectTarget(%d %q) = %q, want %q", tc.status, tc.location, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("RedirectTarget(%d %q) = none, want %q", tc.status, tc.location, tc.want)
		}
	}
}

func TestReleaseTwice(t *testing.T) {
	r := &Response{buf: getBuffer()}
	r.Body = r.buf.Bytes()
	r.Release()
	r.Release()
	var nilResp *Response
	nilResp.Release()
	if r.Body != nil || r.buf != nil {
		t.Error("Release left the body in place")
	}
}
