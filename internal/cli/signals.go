package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// withSignals cancels the context on the first SIGINT or SIGTERM, naming
// the signal as the cause; a second signal exits at once. The returned
// function stops listening.
func withSignals(ctx context.Context, stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			cancel(signalCause(signalName(sig)))
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			fmt.Fprintf(stderr, "databrew-stage: second %s, exiting now\n", signalName(sig))
			os.Exit(130)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// signalCause is the cause a signal gives the run's context; its text is
// the verdict's detail, worded as the user documentation words it.
type signalCause string

func (s signalCause) Error() string { return "Interrupted by " + string(s) }
