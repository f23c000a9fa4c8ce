package cli

import (
	"fmt"

	"github.com/databrew/databrew-stage/schemas"
)

const schemaUsage = `Usage: databrew-stage schema verdict|report

Prints the JSON Schema of the verdict JSON (run --json, .last_run.json,
--verdict-file) or of report --json.`

func schemaCmd(args []string, env Env) int {
	fs := newFlags("schema", schemaUsage, env)
	if code, done := parseFlags(fs, args, env); done {
		return code
	}
	if fs.NArg() != 1 {
		return usageError(env, "schema", "name one schema: verdict or report")
	}
	var doc []byte
	switch fs.Arg(0) {
	case "verdict":
		doc = schemas.Verdict
	case "report":
		doc = schemas.Report
	default:
		return usageError(env, "schema", "unknown schema %q: verdict or report", fs.Arg(0))
	}
	fmt.Fprint(env.Stdout, string(doc))
	return ExitOK
}
