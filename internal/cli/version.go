package cli

import (
	"fmt"
	"runtime"

	"github.com/databrew/databrew-stage/internal/buildinfo"
)

func versionCmd(args []string, env Env) int {
	fs := newFlags("version", "Usage: databrew-stage version", env)
	if code, done := parseFlags(fs, args, env); done {
		return code
	}
	fmt.Fprintf(env.Stdout, "databrew-stage %s (%s %s/%s)\n", buildinfo.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return ExitOK
}
