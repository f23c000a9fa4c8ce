package catalogsite

import (
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Shared header values; net/http only reads them.
var (
	ctPlainHTML = []string{"text/html"}
	ctUTF8HTML  = []string{"text/html; charset=utf-8"}
	ctText      = []string{"text/plain; charset=utf-8"}
	varyAE      = []string{"Accept-Encoding"}
	gzipEnc     = []string{"gzip"}
)

// pageBuf holds the reusable buffers of one response.
type pageBuf struct {
	b   []byte // the page as rendered (UTF-8)
	enc []byte // the page in the site's charset
	z   gzipBuffer
}

var bufPool = sync.Pool{New: func() any {
	return &pageBuf{b: make([]byte, 0, 8<<10)}
}}

func getBuf() *pageBuf { return bufPool.Get().(*pageBuf) }

func putBuf(pb *pageBuf) {
	if cap(pb.b) > 1<<20 || cap(pb.enc) > 1<<20 || pb.z.Cap() > 1<<20 {
		return // do not keep the memory of an outsized page
	}
	pb.b, pb.enc = pb.b[:0], pb.enc[:0]
	pb.z.Reset()
	bufPool.Put(pb)
}

// ServeHTTP answers a request: robots.txt, or a page after applying
// latency and the first matching fault.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if path == "/robots.txt" {
		s.serveRobots(w, r)
		return
	}
	ordinal := s.stats.requests.Add(1)
	s.stats.countPath(path)
	f := s.matchFault(ordinal, r)
	if s.opts.Latency > 0 && !sleepCtx(r.Context(), s.opts.Latency) {
		panic(http.ErrAbortHandler)
	}
	if f != nil {
		s.stats.served[f.Kind].Add(1)
		if s.serveFault(w, r, f) {
			return
		}
	}
	s.servePage(w, r)
}

// servePage answers the request normally.
func (s *Site) servePage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.writeError(w, r, http.StatusMethodNotAllowed)
		return
	}
	pb := getBuf()
	defer putBuf(pb)
	switch status := s.render(pb, r.URL.Path); status {
	case http.StatusFound:
		h := w.Header()
		h.Set("Location", "/catalogue/page-1.html")
		h["Content-Length"] = []string{"0"}
		w.WriteHeader(status)
	case http.StatusOK:
		s.writePage(w, r, pb)
	default:
		s.writeError(w, r, status)
	}
}

// render renders the page for path into pb.b and returns its status. Only
// a 200 leaves a page in pb.b.
func (s *Site) render(pb *pageBuf, path string) int {
	if path == "/" {
		return http.StatusFound
	}
	if rest, ok := strings.CutPrefix(path, "/catalogue/"); ok {
		if n, ok := parseNumber(rest, "page-"); ok {
			return s.renderListing(pb, n)
		}
		if id, ok := parseNumber(rest, "item-"); ok {
			return s.renderItem(pb, id)
		}
	}
	if path == "/private" || strings.HasPrefix(path, "/private/") {
		pb.b = s.appendPrivatePage(pb.b, path)
		return http.StatusOK
	}
	return http.StatusNotFound
}

// parseNumber parses s as prefix + a canonical positive decimal + ".html".
func parseNumber(s, prefix string) (int, bool) {
	digits, ok := strings.CutPrefix(s, prefix)
	if !ok {
		return 0, false
	}
	if digits, ok = strings.CutSuffix(digits, ".html"); !ok {
		return 0, false
	}
	if len(digits) == 0 || len(digits) > 9 || digits[0] == '0' {
		return 0, false
	}
	n := 0
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func (s *Site) renderItem(pb *pageBuf, id int) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if id < 1 || id > len(s.items) {
		return http.StatusNotFound
	}
	it := &s.items[id-1]
	if it.Removed {
		return s.opts.GoneStatus
	}
	pb.b = s.appendItemPage(pb.b, it)
	return http.StatusOK
}

func (s *Site) renderListing(pb *pageBuf, n int) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	total := s.pagesLocked()
	if n > total+1 {
		return http.StatusNotFound
	}
	per := s.opts.PerPage
	start := min((n-1)*per, len(s.visible))
	end := min(start+per, len(s.visible))
	next := n < total || n == total && s.opts.EmptyLastPage
	pb.b = s.appendListingPage(pb.b, n, total, s.items, s.visible[start:end], next)
	return http.StatusOK
}

// writePage writes pb.b as a 200 HTML page, in the site's charset and
// compressed when the site and the request allow it.
func (s *Site) writePage(w http.ResponseWriter, r *http.Request, pb *pageBuf) {
	body := pb.b
	if cm := s.charset.cmap; cm != nil {
		pb.enc = encodeCharmap(pb.enc[:0], body, cm)
		body = pb.enc
	}
	h := w.Header()
	if !s.opts.NoETags {
		etag := etagOf(body)
		h["Etag"] = []string{etag}
		if matchesETag(r.Header.Get("If-None-Match"), etag) {
			s.stats.notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	h["Content-Type"] = s.contentType()
	s.writeBytes(w, r, http.StatusOK, pb, body)
}

// etagOf is a page's strong validator: a digest of its bytes.
func etagOf(body []byte) string {
	h := fnv.New64a()
	_, _ = h.Write(body)
	return `"` + strconv.FormatUint(h.Sum64(), 36) + `"`
}

// matchesETag reports whether an If-None-Match header names etag (or is
// "*").
func matchesETag(header, etag string) bool {
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == etag || tag == "*" {
			return true
		}
	}
	return false
}

// writeError writes a short error page with status.
func (s *Site) writeError(w http.ResponseWriter, r *http.Request, status int) {
	pb := getBuf()
	defer putBuf(pb)
	pb.b = appendErrorPage(pb.b, status)
	w.Header()["Content-Type"] = ctUTF8HTML
	s.writeBytes(w, r, status, pb, pb.b)
}

// writeBytes writes body with status, gzip-compressed when enabled and
// accepted.
func (s *Site) writeBytes(w http.ResponseWriter, r *http.Request, status int, pb *pageBuf, body []byte) {
	h := w.Header()
	if s.opts.Gzip {
		h["Vary"] = varyAE
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			body = pb.z.compress(body)
			h["Content-Encoding"] = gzipEnc
		}
	}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	s.stats.bytes.Add(int64(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// writeBody writes body unless the request is a HEAD request.
func writeBody(w http.ResponseWriter, r *http.Request, body string) {
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, body)
	}
}
