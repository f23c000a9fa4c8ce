package catalogsite

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

func TestCharsetLatin1(t *testing.T) {
	site, srv := newServer(t, Options{Charset: "iso-8859-1"})
	it, _ := site.Item(7)
	r := fetchOK(t, srv.Client(), srv.URL+"/catalogue/item-7.html")
	if ct := r.header.Get("Content-Type"); ct != "text/html; charset=iso-8859-1" {
		t.Errorf("Content-Type %q", ct)
	}
	if !bytes.Contains(r.body, []byte(`<meta charset="iso-8859-1">`)) {
		t.Error("meta charset missing")
	}
	if utf8.Valid(r.body) {
		t.Error("body is valid UTF-8; want Latin-1 bytes")
	}
	raw, _ := charmap.ISO8859_1.NewEncoder().String(it.Title)
	if !bytes.Contains(r.body, []byte(raw)) {
		t.Errorf("body lacks the Latin-1 title %q", raw)
	}
	dec, err := charmap.ISO8859_1.NewDecoder().Bytes(r.body)
	if err != nil {
		t.Fatal(err)
	}
	checkItemDoc(t, parse(t, dec), it)

	list := fetchOK(t, srv.Client(), StartURL(srv.URL))
	if list.header.Get("Content-Type") != "text/html; charset=iso-8859-1" || !bytes.Contains(list.body, []byte{0xa3}) {
		t.Error("listing page is not Latin-1")
	}
}

func TestCharsetWindows1252MetaOnly(t *testing.T) {
	site, srv := newServer(t, Options{Charset: "windows-1252", CharsetInMetaOnly: true})
	site.SetTitle(3, "€uro → Ünïcode")
	it, _ := site.Item(3)
	r := fetchOK(t, srv.Client(), srv.URL+"/catalogue/item-3.html")
	if ct := r.header.Get("Content-Type"); ct != "text/html" {
		t.Errorf("Content-Type %q, want text/html", ct)
	}
	if !bytes.Contains(r.body, []byte(`<meta charset="windows-1252">`)) {
		t.Error("meta charset missing")
	}
	if !bytes.Contains(r.body, []byte("\x80uro &#8594; \xdcn\xefcode")) {
		t.Error("title not encoded as windows-1252 with a character reference")
	}
	dec, _ := charmap.Windows1252.NewDecoder().Bytes(r.body)
	checkItemDoc(t, parse(t, dec), it)
}

func TestCharsetOptions(t *testing.T) {
	for _, name := range []string{"", "UTF-8", "utf8", "latin1", "ISO-8859-1", "windows-1252"} {
		if !SupportedCharset(name) {
			t.Errorf("SupportedCharset(%q) = false", name)
		}
	}
	if SupportedCharset("shift_jis") {
		t.Error("SupportedCharset(shift_jis) = true")
	}
	defer func() {
		if recover() == nil {
			t.Error("New accepted an unsupported charset")
		}
	}()
	New(Options{Charset: "klingon"})
}

func TestGzip(t *testing.T) {
	site, srv := newServer(t, Options{Gzip: true})
	it, _ := site.Item(1)
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/catalogue/item-1.html", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	checkItemDoc(t, parse(t, body), it)

	plain := fetchOK(t, c, srv.URL+"/catalogue/item-1.html")
	if plain.header.Get("Content-Encoding") != "" || !bytes.Equal(plain.body, body) {
		t.Error("response without Accept-Encoding differs or is compressed")
	}

	// The default transport asks for gzip and decompresses transparently.
	resp2, err := srv.Client().Get(srv.URL + "/catalogue/item-1.html")
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if !resp2.Uncompressed || !bytes.Equal(b2, body) {
		t.Errorf("transparent decompression: uncompressed=%v equal=%v", resp2.Uncompressed, bytes.Equal(b2, body))
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"":                    false,
		"gzip":                true,
		"deflate, gzip;q=0.8": true,
		"br, GZIP":            true,
		"gzip;q=0":            false,
		"gzip; q=0.000":       false,
		"*":                   true,
		"identity":            false,
		"x-gzip-ish":          false,
	} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v", h, got)
		}
	}
}

func TestEncodeCharmap(t *testing.T) {
	got := string(encodeCharmap(nil, []byte("a£é→z"), charmap.ISO8859_1))
	if want := "a\xa3\xe9&#8594;z"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !strings.Contains(string(appendEscaped(nil, `<a href="x">&'`)), "&lt;a href=&#34;x&#34;&gt;&amp;&#39;") {
		t.Error("appendEscaped")
	}
}
