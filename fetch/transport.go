package fetch

import (
	"net"
	"net/http"
	"time"
)

// newTransport returns the default transport: at most connsPerHost
// connections per host, all kept alive between requests, HTTP/2 when TLS
// negotiates it, and transparent gzip (the transport adds Accept-Encoding
// itself and decodes the body).
func newTransport(connsPerHost int) *http.Transport {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           0,
		MaxConnsPerHost:        connsPerHost,
		MaxIdleConnsPerHost:    connsPerHost,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
}
