package catalogsite

import (
	"bytes"
	"compress/gzip"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// charsetInfo describes how HTML pages are encoded.
type charsetInfo struct {
	name    string           // canonical name used in headers and meta tags
	cmap    *charmap.Charmap // nil for UTF-8
	ctFull  []string         // Content-Type header value with charset
	ctPlain []string         // Content-Type header value without charset
}

func newCharsetInfo(name string, cm *charmap.Charmap) *charsetInfo {
	return &charsetInfo{
		name:    name,
		cmap:    cm,
		ctFull:  []string{"text/html; charset=" + name},
		ctPlain: []string{"text/html"},
	}
}

var charsets = map[string]*charsetInfo{
	"utf-8":        newCharsetInfo("utf-8", nil),
	"iso-8859-1":   newCharsetInfo("iso-8859-1", charmap.ISO8859_1),
	"windows-1252": newCharsetInfo("windows-1252", charmap.Windows1252),
}

var charsetAliases = map[string]string{
	"":       "utf-8",
	"utf8":   "utf-8",
	"latin1": "iso-8859-1",
	"cp1252": "windows-1252",
}

func lookupCharset(name string) (*charsetInfo, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if alias, ok := charsetAliases[name]; ok {
		name = alias
	}
	cs, ok := charsets[name]
	return cs, ok
}

// SupportedCharset reports whether name is accepted as Options.Charset.
func SupportedCharset(name string) bool {
	_, ok := lookupCharset(name)
	return ok
}

// contentType returns the Content-Type header value for HTML pages.
func (s *Site) contentType() []string {
	if s.opts.CharsetInMetaOnly {
		return s.charset.ctPlain
	}
	return s.charset.ctFull
}

// encodeCharmap appends src (UTF-8) to dst encoded with cm; runes cm cannot
// represent become numeric character references, which is lossless in HTML.
func encodeCharmap(dst, src []byte, cm *charmap.Charmap) []byte {
	for len(src) > 0 {
		ascii := 0
		for ascii < len(src) && src[ascii] < utf8.RuneSelf {
			ascii++
		}
		dst = append(dst, src[:ascii]...)
		src = src[ascii:]
		if len(src) == 0 {
			break
		}
		r, size := utf8.DecodeRune(src)
		src = src[size:]
		if b, ok := cm.EncodeRune(r); ok {
			dst = append(dst, b)
			continue
		}
		dst = append(dst, "&#"...)
		dst = strconv.AppendInt(dst, int64(r), 10)
		dst = append(dst, ';')
	}
	return dst
}

// acceptsGzip reports whether an Accept-Encoding header value allows gzip.
func acceptsGzip(header string) bool {
	for header != "" {
		var part string
		part, header, _ = strings.Cut(header, ",")
		name, params, _ := strings.Cut(part, ";")
		name = strings.TrimSpace(name)
		if !strings.EqualFold(name, "gzip") && name != "*" {
			continue
		}
		if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if v, err := strconv.ParseFloat(strings.TrimSpace(q), 64); err == nil && v == 0 {
				continue
			}
		}
		return true
	}
	return false
}

var gzipPool = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return zw
}}

// gzipBuffer is a reusable buffer for compressed bodies.
type gzipBuffer struct{ bytes.Buffer }

// compress replaces the buffer's contents with src gzip-compressed and
// returns them.
func (z *gzipBuffer) compress(src []byte) []byte {
	z.Reset()
	zw := gzipPool.Get().(*gzip.Writer)
	zw.Reset(&z.Buffer)
	_, _ = zw.Write(src)
	_ = zw.Close()
	zw.Reset(io.Discard)
	gzipPool.Put(zw)
	return z.Bytes()
}
