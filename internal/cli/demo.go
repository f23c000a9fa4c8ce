package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/stage"
)

const demoUsage = `Usage: databrew-stage demo [--dir DIR] [--items N] [--iceberg] [--serve [--port N]]

Serves a bundled catalog site on a loopback port, writes a config for it in
DIR, crawls it, changes the catalog (new prices, removed and new items),
crawls again, and prints both verdicts. Works offline. DIR is reset at the
start of each demo (only if an earlier demo made it).

With --iceberg the two runs publish into the Apache Iceberg table
shop.books instead of Parquet files: a SQLite catalog (DIR/catalog.db) and
a local warehouse (DIR/warehouse), no server needed; each run that
publishes adds one snapshot. It needs a binary built with Iceberg (make
demo-iceberg).

With --serve it crawls nothing: it keeps the catalog up on --port until
Ctrl+C, with a config for it in DIR (one you edited is kept as it is),
and says how to check and run it, change the catalog and take the site
down and back up, from another terminal.`

const demoMarker = ".databrew-demo"

func demoCmd(args []string, env Env) int {
	fs := newFlags("demo", demoUsage, env)
	dir := fs.String("dir", "databrew-demo", "folder for the demo's config, state and output")
	items := fs.Int("items", 60, "items in the demo catalog")
	serve := fs.Bool("serve", false, "keep the catalog up until Ctrl+C instead of crawling it")
	port := fs.Int("port", 8390, "with --serve, the loopback port to serve on (0 picks a free one)")
	table := fs.Bool("iceberg", false, "publish into an Iceberg table in DIR (a SQLite catalog, a local warehouse) instead of Parquet files")
	if code, done := parseFlags(fs, args, env); done {
		return code
	}
	if *table && *serve {
		return usageError(env, "demo", "--iceberg and --serve do not go together")
	}
	if *table && !config.IcebergBuilt {
		return usageError(env, "demo", "--iceberg needs a binary built with Iceberg: make demo-iceberg, or make build-iceberg and run bin/databrew-stage-iceberg demo --iceberg")
	}
	if *items < 10 || *items > 100_000 {
		return usageError(env, "demo", "--items must be between 10 and 100000")
	}
	if *port < 0 || *port > 65535 {
		return usageError(env, "demo", "--port must be between 0 and 65535")
	}
	if *serve {
		ctx, stopSignals := withSignals(context.Background(), env.Stderr)
		defer stopSignals()
		return demoServe(ctx, env, *dir, fmt.Sprintf("127.0.0.1:%d", *port), *items)
	}
	if err := resetDemoDir(*dir); err != nil {
		fmt.Fprintf(env.Stderr, "databrew-stage demo: %v\n", err)
		return ExitFailed
	}
	ctx, stopSignals := withSignals(context.Background(), env.Stderr)
	defer stopSignals()
	siteCtx, stopSite := context.WithCancel(ctx)
	defer stopSite()
	site := catalogsite.New(catalogsite.Options{Items: *items, PerPage: 12})
	base, wait, err := site.Serve(siteCtx, "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(env.Stderr, "databrew-stage demo: serve the catalog: %v\n", err)
		return ExitFailed
	}
	defer func() { stopSite(); _ = wait() }()

	cfgPath := filepath.Join(*dir, "books.toml")
	text := demoConfig(catalogsite.StartURL(base))
	if *table {
		abs, err := filepath.Abs(*dir)
		if err != nil {
			fmt.Fprintf(env.Stderr, "databrew-stage demo: %v\n", err)
			return ExitFailed
		}
		text = demoIcebergConfig(text, abs)
	}
	if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
		fmt.Fprintf(env.Stderr, "databrew-stage demo: %v\n", err)
		return ExitFailed
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return ExitFailed
	}
	fmt.Fprintf(env.Stdout, "Serving a catalog of %d items at %s\nConfig: %s\n\n", *items, base, cfgPath)

	fmt.Fprintln(env.Stdout, "Run 1: the first crawl stores and publishes every item.")
	if !demoRun(ctx, cfg, env) {
		return ExitFailed
	}
	changed := changeCatalog(site)
	fmt.Fprintf(env.Stdout, "\nThe catalog changes: %s.\n\nRun 2: only the new and changed items are published.\n", changed)
	if !demoRun(ctx, cfg, env) {
		return ExitFailed
	}
	bin := commandName()
	if *table {
		fmt.Fprintf(env.Stdout, "\nState and .last_run.json are in %s; the table shop.books has its catalog in %s and its files in %s,\none snapshot for each run that published (each snapshot's summary holds databrew.run-id).\n",
			relPath(cfg.Storage), filepath.Join(relPath(*dir), "catalog.db"), filepath.Join(relPath(*dir), "warehouse"))
		if meta := latestMetadata(filepath.Join(strings.TrimPrefix(cfg.Iceberg.Warehouse, "file://"), "shop.db", "books")); meta != "" {
			fmt.Fprintf(env.Stdout, "Read it with any Iceberg reader through that catalog, or with DuckDB's iceberg extension from its current metadata file:\n  SELECT _change, count(*) FROM iceberg_scan('%s') GROUP BY ALL;\n", meta)
		}
		return ExitOK
	}
	fmt.Fprintf(env.Stdout, "\nState and .last_run.json are in %s; the exports and _verdict.json in %s\nTry: %s report %s\nTo keep a catalog up to edit the config and run it yourself: %s demo --serve\n",
		relPath(cfg.Storage), relPath(cfg.Output), bin, cfgPath, bin)
	return ExitOK
}

func demoRun(ctx context.Context, cfg *config.Config, env Env) bool {
	rep, err := stage.Run(ctx, *cfg, stage.Options{})
	fmt.Fprintln(env.Stdout, "  "+rep.Summary())
	if rep.Export.Published {
		fmt.Fprintf(env.Stdout, "  published %d rows to %s: %s\n", rep.Export.Rows, relPath(rep.Export.Path), strings.Join(rep.Export.Files, ", "))
	} else {
		fmt.Fprintf(env.Stdout, "  nothing published: %s\n", rep.Export.Reason)
	}
	b, _ := json.MarshalIndent(rep, "  ", "  ")
	fmt.Fprintf(env.Stdout, "  %s\n", b)
	if err != nil {
		fmt.Fprintf(env.Stderr, "databrew-stage demo: %v\n", err)
		return false
	}
	return !rep.Failed()
}

// changeCatalog reprices three items, removes two and adds four.
func changeCatalog(site *catalogsite.Site) string {
	for _, id := range []int{2, 5, 9} {
		if it, ok := site.Item(id); ok {
			site.SetPrice(id, it.Price+1.25)
		}
	}
	site.Remove(3)
	site.Remove(7)
	site.Add(4)
	return "3 new prices, 2 items removed, 4 items added"
}

// resetDemoDir empties dir if an earlier demo made it, and refuses to touch
// a folder it did not make.
func resetDemoDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case len(entries) == 0:
	default:
		if _, err := os.Stat(filepath.Join(dir, demoMarker)); err != nil {
			return fmt.Errorf("%s exists and was not made by a demo; choose another --dir", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, demoMarker), []byte("made by databrew-stage demo; reset by the next demo\n"), 0o644)
}

// latestMetadata is the newest metadata file of the Iceberg table at the
// folder table ("" if none): the catalog's current one while a single
// writer commits (their names begin with an increasing version number).
func latestMetadata(table string) string {
	files, _ := filepath.Glob(filepath.Join(table, "metadata", "*.metadata.json"))
	if len(files) == 0 {
		return ""
	}
	return slices.Max(files)
}

// demoIcebergConfig turns the demo's config text into one publishing into
// the Iceberg table shop.books, its SQLite catalog and warehouse in the
// folder dir (absolute).
func demoIcebergConfig(text, dir string) string {
	text = strings.Replace(text, `output  = "out/books"`, `output  = "iceberg://shop.books"`, 1)
	return text + fmt.Sprintf("\n[iceberg]\ncatalog = \"sql\"\nuri = %q\nwarehouse = %q\n",
		"sqlite://"+filepath.Join(dir, "catalog.db"), "file://"+filepath.Join(dir, "warehouse"))
}

func demoConfig(start string) string {
	return `# A config for the bundled demo catalog. Copy it as a starting point.
name = "books"
start_urls = ["` + start + `"]
storage = "state/books"
output  = "out/books"

[policy]
concurrency = 4
retry_pass_delay = "1s"
` + catalogsite.ExtractConfig + `
[export]
format = "parquet"
tombstones = true                  # removed items are published once, after a clean traversal
`
}
