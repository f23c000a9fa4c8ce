package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"github.com/databrew/databrew-stage/internal/catalogsite"
)

// demoControl is where a served demo catalog takes its changes: POST only,
// and robots.txt keeps crawlers out of it.
const demoControl = "/_demo/"

// demoServe keeps the bundled catalog up at addr until a signal, with the
// demo config for it in dir (written when missing or when an earlier demo
// left it unedited for another address; an edited config is kept), so a
// newcomer can edit the config, check it and run it again, and change the
// catalog or take it down from another terminal.
func demoServe(ctx context.Context, env Env, dir, addr string, items int) int {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(env.Stderr, "databrew-stage demo: %v\n", err)
		return ExitFailed
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "databrew-stage demo: serve the catalog at %s: %v (choose another with --port)\n", addr, err)
		return ExitFailed
	}
	base := "http://" + ln.Addr().String()
	cfgPath := filepath.Join(dir, "books.toml")
	kept := true
	if old, err := os.ReadFile(cfgPath); errors.Is(err, os.ErrNotExist) || (err == nil && staleDemoConfig(old, base)) {
		kept = false
		err = os.WriteFile(cfgPath, []byte(demoConfig(catalogsite.StartURL(base))), 0o644)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, demoMarker), []byte("made by databrew-stage demo; reset by the next demo\n"), 0o644)
		}
		if err != nil {
			_ = ln.Close()
			fmt.Fprintf(env.Stderr, "databrew-stage demo: %v\n", err)
			return ExitFailed
		}
	}
	site := catalogsite.New(catalogsite.Options{Items: items, PerPage: 12})
	site.SetRobots(catalogsite.DefaultRobots + "Disallow: " + demoControl + "\n")
	srv := &http.Server{Handler: withDemoControl(site), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	bin := commandName()
	note := "written for it"
	if kept {
		note = "yours, kept as you left it (delete it for a fresh one)"
	}
	fmt.Fprintf(env.Stdout, `Serving a catalog of %d items at %s until Ctrl+C.
Config: %s, %s. Edit it, then in another terminal:
  %s check %s
  %s run %s
Change the catalog (new prices, removed and new items), then run again:
  curl -X POST %s%schange
Take the site down (503 on every page) and bring it back:
  curl -X POST '%s%soutage?status=503'
  curl -X POST %s%soutage?off=1
`, items, base, cfgPath, note, bin, cfgPath, bin, cfgPath, base, demoControl, base, demoControl, base, demoControl)

	select {
	case <-ctx.Done():
	case err := <-served:
		fmt.Fprintf(env.Stderr, "databrew-stage demo: %v\n", err)
		return ExitFailed
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	fmt.Fprintln(env.Stdout, "Stopped.")
	return ExitOK
}

// demoStartURL is the start URL line of demoConfig.
var demoStartURL = regexp.MustCompile(`(?m)^start_urls = \["([^"]*)"\]$`)

// staleDemoConfig reports whether cfg is a config a demo wrote, unedited,
// for a catalog at another address than base: make demo serves on a free
// port, so the config it leaves names a catalog that is gone. Such a
// config is written anew; an edited one is kept as it is.
func staleDemoConfig(cfg []byte, base string) bool {
	m := demoStartURL.FindSubmatch(cfg)
	return m != nil && string(m[1]) != catalogsite.StartURL(base) && string(cfg) == demoConfig(string(m[1]))
}

// withDemoControl serves the catalog, and under demoControl takes POSTs
// that change it: change (a round of new prices, removals and new items)
// and outage (?status=N takes every page down with that status, ?off=1
// brings them back).
func withDemoControl(site *catalogsite.Site) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", site)
	mux.HandleFunc("POST "+demoControl+"change", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "%s\n", changeCatalog(site))
	})
	mux.HandleFunc("POST "+demoControl+"outage", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("off") != "" {
			site.ClearFaults()
			fmt.Fprintln(w, "the site is back")
			return
		}
		status := 503
		if s := r.URL.Query().Get("status"); s != "" {
			if _, err := fmt.Sscanf(s, "%d", &status); err != nil || status < 400 || status > 599 {
				http.Error(w, "status must be an HTTP error status (400-599)", http.StatusBadRequest)
				return
			}
		}
		site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultStatus, Status: status})
		fmt.Fprintf(w, "every page answers %d now\n", status)
	})
	return mux
}

// commandName is how the hints call the binary: databrew-stage when it is
// on the PATH (make install puts it there), else through go run.
func commandName() string {
	if _, err := exec.LookPath("databrew-stage"); err == nil {
		return "databrew-stage"
	}
	return "go run ./cmd/databrew-stage"
}
