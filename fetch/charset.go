package fetch

import (
	"strings"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/transform"
)

// sniffLen is how much of the body charset detection examines.
const sniffLen = 1024

// isText reports whether a body with this Content-Type is charset-decoded:
// HTML (including an empty type) and text/*.
func isText(contentType string) bool {
	mt := mediaType(contentType)
	return mt == "" || strings.EqualFold(mt, "application/xhtml+xml") ||
		len(mt) > 5 && strings.EqualFold(mt[:5], "text/")
}

// decode detects the body's charset and, unless the bytes are already valid
// as UTF-8, replaces Body with its UTF-8 decoding. The UTF-8 path neither
// copies nor allocates when the Content-Type declares utf-8.
func (r *Response) decode(contentType string) {
	enc, name := detectCharset(r.Body, contentType)
	r.Charset = name
	if enc == nil || name == "utf-8" || asciiIdentity(name) && isASCII(r.Body) {
		return
	}
	out := getBuffer()
	out.Grow(len(r.Body) + len(r.Body)/4)
	w := transform.NewWriter(out, enc.NewDecoder())
	_, err := w.Write(r.Body)
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		putBuffer(out) // keep the raw bytes rather than a partial decoding
		return
	}
	putBuffer(r.buf)
	r.buf, r.Body = out, out.Bytes()
}

// detectCharset returns the body's encoding and its WHATWG name. A
// Content-Type declaring utf-8 is recognised without calling
// charset.DetermineEncoding (which allocates) unless a UTF-16 byte order
// mark overrides it.
func detectCharset(body []byte, contentType string) (encoding.Encoding, string) {
	if declaresUTF8(contentType) && !hasUTF16BOM(body) {
		return nil, "utf-8"
	}
	enc, name, _ := charset.DetermineEncoding(body[:min(len(body), sniffLen)], contentType)
	return enc, name
}

// declaresUTF8 reports whether contentType has a charset=utf-8 parameter.
func declaresUTF8(contentType string) bool {
	_, params, ok := strings.Cut(contentType, ";")
	for ok {
		var p string
		p, params, ok = strings.Cut(params, ";")
		k, v, found := strings.Cut(p, "=")
		if !found || !strings.EqualFold(strings.TrimSpace(k), "charset") {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		return strings.EqualFold(v, "utf-8") || strings.EqualFold(v, "utf8")
	}
	return false
}

func hasUTF16BOM(b []byte) bool {
	return len(b) >= 2 && (b[0] == 0xFE && b[1] == 0xFF || b[0] == 0xFF && b[1] == 0xFE)
}

// asciiIdentity reports whether the named encoding decodes ASCII bytes to
// themselves, so an all-ASCII body needs no copy.
func asciiIdentity(name string) bool {
	switch name {
	case "utf-16be", "utf-16le", "iso-2022-jp", "replacement":
		return false
	}
	return true
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
