package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/databrew/databrew-stage/stage"
	"github.com/databrew/databrew-stage/verdict"
)

const reportUsage = `Usage: databrew-stage report [--stale-after N] [--json] CONFIG...

Shows the last verdict of each config, read from .last_run.json in its
storage path (it never opens the state, so it works while a run holds it);
a config run as shards gets one line per shard.
With --stale-after N, a config is stale when its last N or more runs in a row
stored nothing new or changed, or when no run has started yet; report then
exits 1. Exit 3 when a config's .last_run.json cannot be read (every config
is still reported), 2 on usage or config errors.`

// ExitUnreadable is report's exit code when a config's .last_run.json
// cannot be read: the report cannot say whether the config is stale.
const ExitUnreadable = 3

// ReportEntry is one config's line of `report --json`.
type ReportEntry struct {
	Config     string `json:"config"`
	ConfigFile string `json:"config_file"`
	Storage    string `json:"storage"`
	// Shard names the shard (such as "2-of-4") whose state folder the
	// entry reads, for a config run as shards: one entry per shard.
	Shard          string             `json:"shard,omitempty"`
	LastRun        *verdict.RunReport `json:"last_run"`
	EmptyRunStreak int                `json:"empty_run_streak"`
	StaleAfter     int                `json:"stale_after"`
	Stale          bool               `json:"stale"`
	// Error says why .last_run.json could not be read.
	Error string `json:"error,omitempty"`
}

func reportCmd(args []string, env Env) int {
	fs := newFlags("report", reportUsage, env)
	staleAfter := fs.Int("stale-after", 0, "a config is stale after this many unproductive runs in a row (0: never stale)")
	asJSON := fs.Bool("json", false, "print one JSON object per config (JSON Lines)")
	if code, done := parseFlags(fs, args, env); done {
		return code
	}
	if fs.NArg() == 0 {
		return usageError(env, "report", "at least one CONFIG is required")
	}
	if *staleAfter < 0 {
		return usageError(env, "report", "--stale-after must not be negative")
	}
	cfgs, ok := loadConfigs(fs.Args(), env, false)
	if !ok {
		return ExitUsage
	}
	entries := make([]ReportEntry, 0, len(cfgs))
	anyStale, unreadable := false, false
	var targets []ReportEntry
	for _, cfg := range cfgs {
		e := ReportEntry{Config: cfg.Name, ConfigFile: cfg.File, Storage: cfg.Storage, StaleAfter: *staleAfter}
		folders, err := stage.ShardStates(cfg.Storage)
		if err != nil {
			fmt.Fprintf(env.Stderr, "databrew-stage report: %v\n", err)
		}
		if len(folders) == 0 {
			targets = append(targets, e)
		}
		for _, dir := range folders {
			e.Storage, e.Shard = dir, strings.TrimPrefix(filepath.Base(dir), "shard-")
			targets = append(targets, e)
		}
	}
	for _, e := range targets {
		last, err := stage.ReadLastRun(e.Storage)
		switch {
		case err == nil:
			e.LastRun, e.EmptyRunStreak = &last, last.EmptyRunStreak
		case !errors.Is(err, stage.ErrNoLastRun):
			fmt.Fprintf(env.Stderr, "databrew-stage report: %v\n", err)
			e.Error, unreadable = err.Error(), true
		}
		e.Stale = *staleAfter > 0 && e.Error == "" && (e.LastRun == nil || e.EmptyRunStreak >= *staleAfter)
		anyStale = anyStale || e.Stale
		entries = append(entries, e)
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		for _, e := range entries {
			if err := enc.Encode(e); err != nil {
				fmt.Fprintf(env.Stderr, "databrew-stage report: %v\n", err)
				return ExitFailed
			}
		}
	} else {
		printReportTable(env, entries, *staleAfter > 0)
	}
	switch {
	case unreadable:
		return ExitUnreadable
	case anyStale:
		return ExitFailed
	}
	return ExitOK
}

func printReportTable(env Env, entries []ReportEntry, showStale bool) {
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	header := "CONFIG\tLAST RUN\tOUTCOME\tSTOP\tNEW\tCHANGED\tGAPS\tEMPTY STREAK\tDETAIL"
	if showStale {
		header += "\tSTALE"
	}
	fmt.Fprintln(tw, header)
	for _, e := range entries {
		name := e.Config
		if e.Shard != "" {
			name += " [" + e.Shard + "]"
		}
		if e.LastRun == nil {
			line := fmt.Sprintf("%s\tnever\t-\t-\t-\t-\t-\t-\tno run has started", name)
			if e.Error != "" {
				line = fmt.Sprintf("%s\tunreadable\t-\t-\t-\t-\t-\t-\t%s", name, e.Error)
			}
			if showStale {
				line += "\tyes"
			}
			fmt.Fprintln(tw, line)
			continue
		}
		r := e.LastRun
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s", name, r.StartedAt.UTC().Format(time.RFC3339), r.Outcome, r.Stop,
			r.Items.New, r.Items.Changed, r.CoverageGaps, r.EmptyRunStreak, r.Detail)
		if showStale {
			line += "\t" + map[bool]string{true: "yes", false: "no"}[e.Stale]
		}
		fmt.Fprintln(tw, line)
	}
	_ = tw.Flush()
}
