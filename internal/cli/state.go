package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/stage"
	"github.com/databrew/databrew-stage/state"
)

const stateUsage = `Usage: databrew-stage state check CONFIG...
       databrew-stage state repair CONFIG

check examines each config's state file without changing it: its meta
pages, every page, bbolt's consistency check and every record; it prints
what is wrong. A missing or empty state file is a problem when the output
already holds published runs. Exit 0 when every state file is sound, 1 when
a problem was found (or a run holds the file), 2 on usage or config errors.

repair salvages a damaged state file: it copies every record it can still
read into a new file, keeps what was waiting for export (an item whose
pending version was lost is exported again the next time it is fetched),
keeps the damaged file aside as state.db.broken-<time>, and prints what it
salvaged and what was lost. A sound file is left as it is. Exit 0 when the
file is sound or was repaired, 1 when it could not be (nothing to salvage,
or a run holds it: repair never runs beside one), 2 on usage errors.

To start over instead, run with --reset-state: every item is exported
again as new.

A config run as shards keeps one state per shard (<storage>/shard-I-of-N):
check examines each; repair takes --shard I/N.`

func stateCmd(args []string, env Env) int {
	fs := newFlags("state", stateUsage, env)
	shardFlag := fs.String("shard", "", "repair the state of shard I of N (I/N) of a config run as shards")
	if code, done := parseFlags(fs, args, env); done {
		return code
	}
	if fs.NArg() == 0 {
		return usageError(env, "state", "name a subcommand: check or repair")
	}
	sub, paths := fs.Arg(0), fs.Args()[1:]
	switch {
	case sub != "check" && sub != "repair":
		return usageError(env, "state", "unknown subcommand %q: check or repair", sub)
	case len(paths) == 0:
		return usageError(env, "state", "at least one CONFIG is required")
	case sub == "repair" && len(paths) != 1:
		return usageError(env, "state", "repair takes exactly one CONFIG")
	}
	cfgs, ok := loadConfigs(paths, env, false)
	if !ok {
		return ExitUsage
	}
	if sub == "repair" {
		cfg := cfgs[0]
		folders, _ := stage.ShardStates(cfg.Storage)
		switch {
		case *shardFlag != "":
			s, err := shardFlags{shard: *shardFlag, runID: "repair"}.parse(env.Getenv)
			if err != nil {
				return usageError(env, "state", "%v", err)
			}
			c := *cfg
			c.Storage = stage.ShardStorage(cfg.Storage, *s)
			cfg = &c
		case len(folders) > 0:
			return usageError(env, "state", "%s is run as shards: name the one to repair with --shard I/N", cfg.Name)
		}
		return stateRepair(cfg, env)
	}
	if *shardFlag != "" {
		return usageError(env, "state", "--shard is for repair: check examines every shard's state")
	}
	code := ExitOK
	for _, cfg := range cfgs {
		for _, c := range shardConfigs(cfg) {
			if !stateCheck(c, env) {
				code = ExitFailed
			}
		}
	}
	return code
}

// shardConfigs is cfg once per shard state folder its storage holds,
// each with that folder as its storage and the shard in its name, or cfg
// alone for a config not run as shards.
func shardConfigs(cfg *config.Config) []*config.Config {
	folders, err := stage.ShardStates(cfg.Storage)
	if err != nil || len(folders) == 0 {
		return []*config.Config{cfg}
	}
	out := make([]*config.Config, len(folders))
	for i, dir := range folders {
		c := *cfg
		c.Storage, c.Name = dir, cfg.Name+" ["+strings.TrimPrefix(filepath.Base(dir), "shard-")+"]"
		out[i] = &c
	}
	return out
}

// stateCheck prints what is wrong with a config's state file and reports
// whether it is sound.
func stateCheck(cfg *config.Config, env Env) bool {
	h, err := stage.CheckState(context.Background(), *cfg)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", cfg.Name, err)
		return false
	}
	path := relPath(h.Path)
	switch {
	case len(h.Problems) > 0:
		fmt.Fprintf(env.Stdout, "%s: %s has problems:\n", cfg.Name, path)
		for _, p := range h.Problems {
			fmt.Fprintf(env.Stdout, "  %s\n", p)
		}
		file := relPath(cfg.File)
		if h.Missing || h.Size == 0 {
			fmt.Fprintf(env.Stdout, "Restore it, or start over with 'databrew-stage run --reset-state %s' (every item is exported again as new).\n", file)
		} else {
			fmt.Fprintf(env.Stdout, "Salvage it with 'databrew-stage state repair %s', or start over with 'databrew-stage run --reset-state %s' (every item is exported again as new).\n", file, file)
		}
		return false
	case h.Missing:
		fmt.Fprintf(env.Stdout, "%s: %s: no state yet (no run has started)\n", cfg.Name, path)
	case h.Size == 0:
		fmt.Fprintf(env.Stdout, "%s: %s: empty (the next run starts a new state)\n", cfg.Name, path)
	default:
		fmt.Fprintf(env.Stdout, "%s: %s is sound: %d pages of %d bytes; records: %s\n", cfg.Name, path, h.Pages, h.PageSize, counts(h.Records))
	}
	return true
}

// stateRepair salvages a config's damaged state file and prints what it
// salvaged and what was lost.
func stateRepair(cfg *config.Config, env Env) int {
	s, err := stage.RepairState(*cfg)
	path := relPath(s.Path)
	switch {
	case errors.Is(err, state.ErrNoState), errors.Is(err, state.ErrCorrupt):
		fmt.Fprintf(env.Stderr, "%s: %v\nStart over with 'databrew-stage run --reset-state %s' (every item is exported again as new).\n", cfg.Name, err, relPath(cfg.File))
		return ExitFailed
	case err != nil:
		fmt.Fprintf(env.Stderr, "%s: %v\n", cfg.Name, err)
		return ExitFailed
	case s.MovedTo == "":
		fmt.Fprintf(env.Stdout, "%s: %s is sound: nothing to repair\n", cfg.Name, path)
		return ExitOK
	}
	fmt.Fprintf(env.Stdout, "%s: %s was damaged:\n", cfg.Name, path)
	for _, p := range s.Problems {
		fmt.Fprintf(env.Stdout, "  %s\n", p)
	}
	fmt.Fprintf(env.Stdout, "Salvaged into a new %s; the damaged file is kept as %s.\n\n", path, relPath(s.MovedTo))
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BUCKET\tCOPIED\tLEFT OUT\tUNREADABLE PAGES")
	names := slices.Sorted(maps.Keys(merge(s.Records, s.Copied, s.Dropped, s.Unreadable)))
	for _, b := range names {
		name := b
		if name == "" {
			name = "(bucket list)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", name, s.Copied[b], s.Dropped[b], s.Unreadable[b])
	}
	_ = tw.Flush()
	fmt.Fprintln(env.Stdout)
	if s.LostPending > 0 {
		fmt.Fprintf(env.Stdout, "%d pending versions could not be read.\n", s.LostPending)
	}
	if s.Reexport > 0 {
		fmt.Fprintf(env.Stdout, "%d items whose pending version was lost are exported again the next time they are fetched.\n", s.Reexport)
	}
	if s.Rebuilt > 0 {
		fmt.Fprintf(env.Stdout, "%d item records were rebuilt from their pending version.\n", s.Rebuilt)
	}
	if s.Unreadable["items"] > 0 || s.Unreadable[""] > 0 {
		fmt.Fprintln(env.Stdout, "Items whose records were lost are exported again as new the next time they are fetched.")
	}
	if s.Incomplete {
		fmt.Fprintln(env.Stdout, "Queued or failed URLs were lost: the current traversal counts a coverage gap, so it removes no item; the next one fetches them again.")
	}
	return ExitOK
}

// counts shows record counts per bucket in name order.
func counts(m map[string]int) string {
	out := ""
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("%s %d", k, m[k])
	}
	return out
}

// merge returns the union of the maps' keys, as a map.
func merge(ms ...map[string]int) map[string]bool {
	out := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			out[k] = true
		}
	}
	return out
}
