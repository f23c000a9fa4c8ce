package catalogsite

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"
)

// StartURL returns the first listing page's URL under base, e.g. the URL
// of an httptest.Server.
func StartURL(base string) string {
	return strings.TrimSuffix(base, "/") + "/catalogue/page-1.html"
}

// shutdownGrace is how long Serve waits for in-flight requests on shutdown.
const shutdownGrace = 5 * time.Second

// Serve listens on addr (e.g. "127.0.0.1:0") and serves the site until ctx
// is cancelled. It returns the base URL ("http://host:port") and a wait
// function that blocks until the server has shut down and returns the
// serving error, nil after a clean shutdown. Serve rebases fault time
// windows to the moment it starts listening.
func (s *Site) Serve(ctx context.Context, addr string) (baseURL string, wait func() error, err error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return "", nil, err
	}
	// Request contexts end when shutdown starts, which releases hanging
	// requests and latency sleeps.
	baseCtx, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
	}
	stop, cancelStop := context.WithCancel(ctx)
	serveErr := make(chan error, 1)
	done := make(chan struct{})
	s.Rebase()
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		serveErr <- err
		cancelStop()
	}()
	go func() {
		defer close(done)
		<-stop.Done()
		cancelBase()
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			_ = srv.Close()
		}
	}()
	wait = func() error {
		<-done
		err := <-serveErr
		serveErr <- err // let wait be called again
		return err
	}
	return "http://" + ln.Addr().String(), wait, nil
}
