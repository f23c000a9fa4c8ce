// Command databrew-stage is a single-shot crawler stage for data pipelines:
// it crawls a catalog site, stores typed items, and ends every run with one
// verdict that drives its exit code. Run it with --help for the commands.
package main

import (
	"os"

	"github.com/databrew/databrew-stage/internal/cli"
	"github.com/databrew/databrew-stage/internal/exeadvice"
	"github.com/databrew/databrew-stage/internal/gctune"
)

func main() {
	gctune.Apply()
	// A hint to the kernel: a run goes on as well without it (it fails
	// only where /proc is missing).
	_ = exeadvice.Apply()
	os.Exit(cli.Main(os.Args[1:], cli.OSEnv()))
}
