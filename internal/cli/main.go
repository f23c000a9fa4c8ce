// Package cli is the databrew-stage command line: run, report, check,
// state, demo, schema and version. Main returns the process exit code so
// tests drive it in-process.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/databrew/databrew-stage/stage"
)

// Exit codes shared by every command.
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitUsage  = 2
)

// Env is what a command sees of the process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// RunOptions, when set, adjusts the stage options of every run: a
	// program that embeds the command line adds the Go API's hooks with
	// it (middleware, a refresh hook, publish-step observers).
	RunOptions func(*stage.Options)
	// CommitOptions, when set, adjusts the options of every commit.
	CommitOptions func(*stage.CommitOptions)
}

// OSEnv returns the process's real streams.
func OSEnv() Env {
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
}

const usage = `databrew-stage crawls a catalog site, stores typed items, and ends every run
with one verdict that drives its exit code, so a pipeline never builds on a
truncated export.

Usage:
  databrew-stage run [flags] CONFIG...        run each config once, in order
  databrew-stage commit CONFIG --run-id ID --shards N
                                              publish a logical run of N shards, once
  databrew-stage report [flags] CONFIG...     show the last verdict of each config
  databrew-stage check CONFIG [--url URL]     validate a config; show what pages extract
  databrew-stage state check CONFIG...        examine each config's state file; exit 1 if damaged
  databrew-stage state repair CONFIG          salvage a damaged state file into a new one
  databrew-stage demo [--dir DIR]             crawl a bundled catalog site twice, offline
  databrew-stage schema verdict|report        print a JSON Schema of the JSON output
  databrew-stage version                      print the version

Run 'databrew-stage COMMAND --help' for a command's flags.

Exit codes of run: 0 every run succeeded or was partial; 1 a run failed,
or its export failed with an error (see --fail-when); 2 usage or config
error, nothing ran; N with --exit-unproductive N when every run succeeded
and none stored anything new.
`

// Main runs the command line args (without the program name) and returns
// the exit code.
func Main(args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return ExitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return runCmd(rest, env)
	case "report":
		return reportCmd(rest, env)
	case "commit":
		return commitCmd(rest, env)
	case "check":
		return checkCmd(rest, env)
	case "state":
		return stateCmd(rest, env)
	case "demo":
		return demoCmd(rest, env)
	case "schema":
		return schemaCmd(rest, env)
	case "version", "--version":
		return versionCmd(rest, env)
	case "help", "-h", "--help":
		fmt.Fprint(env.Stdout, usage)
		return ExitOK
	default:
		fmt.Fprintf(env.Stderr, "databrew-stage: unknown command %q\n\n%s", cmd, usage)
		return ExitUsage
	}
}

// newFlags returns a flag set whose --help prints the command's usage.
func newFlags(name, synopsis string, env Env) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintln(env.Stdout, strings.TrimSpace(synopsis))
		if flags := fs.FlagUsages(); flags != "" {
			fmt.Fprintf(env.Stdout, "\nFlags:\n%s", flags)
		}
	}
	return fs
}

// parseFlags parses args; it returns done with the exit code when the
// command must not go on (help asked, or a usage error).
func parseFlags(fs *pflag.FlagSet, args []string, env Env) (code int, done bool) {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		return ExitOK, true
	case err != nil:
		fmt.Fprintf(env.Stderr, "databrew-stage %s: %v\nRun 'databrew-stage %s --help' for usage.\n", fs.Name(), err, fs.Name())
		return ExitUsage, true
	}
	return 0, false
}

func usageError(env Env, cmd, format string, args ...any) int {
	fmt.Fprintf(env.Stderr, "databrew-stage %s: %s\nRun 'databrew-stage %s --help' for usage.\n", cmd, fmt.Sprintf(format, args...), cmd)
	return ExitUsage
}
