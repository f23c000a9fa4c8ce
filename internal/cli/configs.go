package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/databrew/databrew-stage/config"
)

// loadConfigs loads every config before anything runs: one bad file means
// nothing runs. It prints every problem and returns false then.
func loadConfigs(paths []string, env Env) ([]*config.Config, bool) {
	var cfgs []*config.Config
	ok := true
	storages, outputs := map[string]string{}, map[string]string{}
	for _, p := range paths {
		cfg, err := config.Load(p)
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
