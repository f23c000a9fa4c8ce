package fetch

import (
	"bytes"
	"context"
	"net/http"
	"testing"
)

func TestCharsetDecoding(t *testing.T) {
	// "café – naïve" in windows-1252: é=E9, en dash=96, ï=EF.
	const want = "café – naïve"
	latin := []byte("caf\xe9 \x96 na\xefve")
	cases := []struct {
		name, contentType string
		body              []byte
		wantText          string
		wantCharset       string
	}{
		{"meta windows-1252", "text/html",
			append([]byte(`<html><head><meta charset="windows-1252"></head><body>`), latin...),
			want, "windows-1252"},
		{"meta http-equiv iso-8859-1", "",
			append([]byte(`<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"></head><body>`), latin...),
			want, "windows-1252"},
		{"header iso-8859-1", "text/html; charset=ISO-8859-1",
			append([]byte(`<html><body>`), latin...), want, "windows-1252"},
		{"header windows-1252 plain text", "text/plain; charset=windows-1252",
			latin, want, "windows-1252"},
		{"header wins over meta", "text/html; charset=windows-1252",
			append([]byte(`<meta charset="utf-8">`), latin...), want, "windows-1252"},
		{"undeclared utf-8", "text/html",
			[]byte("<p>" + want + "</p>"), want, "utf-8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = []string{tc.contentType}
				w.Write(tc.body)
			})
			c := newTestClient(t, Config{})
			resp, err := c.Fetch(context.Background(), srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Release()
			if !bytes.Contains(resp.Body, []byte(tc.wantText)) || resp.Charset != tc.wantCharset {
				t.Errorf("body %q charset %q, want it to contain %q as %s",
					resp.Body, resp.Charset, tc.wantText, tc.wantCharset)
			}
			if resp.RawBytes != len(tc.body) {
				t.Errorf("RawBytes = %d, want %d", resp.RawBytes, len(tc.body))
			}
		})
	}
}

func TestCharsetUTF16BOM(t *testing.T) {
	body := []byte{0xFF, 0xFE, 'h', 0, 'i', 0, 0xE9, 0}
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	})
	c := newTestClient(t, Config{})
	resp, err := c.Fetch(context.Background(), srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Release()
	// The byte order mark survives as U+FEFF, as a UTF-8 page keeps its own.
	if string(resp.Body) != "\ufeffhié" || resp.Charset != "utf-16le" {
		t.Errorf("body %q charset %q, want \"\\ufeffhié\" utf-16le", resp.Body, resp.Charset)
	}
}

func TestCharsetNotForBinary(t *testing.T) {
	body := []byte("\x89PNG\r\n\x1a\n\xe9\xff")
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(body)
	})
	c := newTestClient(t, Config{})
	resp, err := c.Fetch(context.Background(), srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Release()
	if !bytes.Equal(resp.Body, body) || resp.Charset != "" {
		t.Errorf("binary body changed: %q charset %q", resp.Body, resp.Charset)
	}
}

func TestCharsetFastPaths(t *testing.T) {
	utf8Body := []byte("<p>déjà vu</p>")
	r := &Response{Body: utf8Body}
	allocs := testing.AllocsPerRun(100, func() { r.decode("text/html; charset=utf-8") })
	if allocs != 0 || &r.Body[0] != &utf8Body[0] || r.Charset != "utf-8" {
		t.Errorf("declared utf-8: %v allocs, copied %v, charset %q", allocs, &r.Body[0] != &utf8Body[0], r.Charset)
	}
	ascii := []byte("<p>plain ascii</p>")
	r = &Response{Body: ascii}
	r.decode("text/html; charset=windows-1252")
	if &r.Body[0] != &ascii[0] || r.Charset != "windows-1252" {
		t.Errorf("ascii windows-1252 body was copied or misnamed (%q)", r.Charset)
	}
}

func TestDeclaresUTF8(t *testing.T) {
	for ct, want := range map[string]bool{
		"text/html; charset=utf-8":           true,
		`text/html;charset="UTF-8"`:          true,
		"text/html; q=1; Charset = utf8":     true,
		"text/html; charset=iso-8859-1":      false,
		"text/html":                          false,
		"":                                   false,
		"text/html; charset":                 false,
		"text/html; foo=utf-8; charset=koi8": false,
	} {
		if got := declaresUTF8(ct); got != want {
			t.Errorf("declaresUTF8(%q) = %v, want %v", ct, got, want)
		}
	}
}
