// Package fetch is the HTTP side of a polite crawler stage.
//
// A Client performs one HTTP exchange per Fetch call: no retries (the caller
// retries), redirects followed only within scope, configured headers and
// cookies sent only within scope, the body read into a pooled
// buffer under a size limit and decoded to UTF-8. A body past its first
// MiB leaves the pool and, with a body budget, waits until what the big
// bodies being read hold together leaves room for it. Failures are reported as
// *Error values whose Kind tells the caller what went wrong on the network.
//
// Robots answers whether a URL may be fetched according to the host's
// robots.txt, fetching each robots.txt once per scheme and host. Politeness
// spaces out request starts per host.
package fetch
