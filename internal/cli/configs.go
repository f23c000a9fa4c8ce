package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/stage"
)

// loadConfigs loads every config before anything runs: one bad file means
// nothing runs. It prints every problem and returns false then. A command
// that sends requests reads the variables of [request] from the
// environment (sendsRequests), and starts the browser of each config with
// [render] once, so one that is missing or does not start is a config
// error before any request; report and state send none, so they need
// none of those variables set, nor a browser: a monitoring job needs no
// site's token.
func loadConfigs(paths []string, env Env, sendsRequests bool) ([]*config.Config, bool) {
	opts := config.Options{Getenv: env.Getenv}
	if !sendsRequests {
		opts.Getenv = func(string) string { return "unused" }
	}
	var cfgs []*config.Config
	ok := true
	storages, outputs := map[string]string{}, map[string]string{}
	for _, p := range paths {
		cfg, err := config.LoadWith(p, opts)
		if err != nil {
			fmt.Fprintln(env.Stderr, err)
			ok = false
			continue
		}
		if other, dup := storages[cfg.Storage]; dup {
			fmt.Fprintf(env.Stderr, "%s: storage: %s is also the storage of %s; each config needs its own\n", p, cfg.Storage, other)
			ok = false
			continue
		}
		if other, dup := outputs[cfg.Output]; dup {
			fmt.Fprintf(env.Stderr, "%s: output: %s is also the output of %s; each config needs its own\n", p, cfg.Output, other)
			ok = false
			continue
		}
		storages[cfg.Storage] = p
		outputs[cfg.Output] = p
		cfgs = append(cfgs, cfg)
	}
	if ok && sendsRequests {
		for _, cfg := range cfgs {
			if err := stage.CheckBrowser(*cfg, stage.Options{Getenv: env.Getenv}); err != nil {
				fmt.Fprintln(env.Stderr, err)
				ok = false
			}
		}
	}
	return cfgs, ok
}

// relPath shows a path below the working directory relative to it.
func relPath(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}
