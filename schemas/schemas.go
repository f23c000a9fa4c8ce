// Package schemas publishes the JSON Schemas of databrew-stage's JSON
// output: the run verdict (run --json, .last_run.json, --verdict-file) and
// the entries of report --json.
package schemas

import _ "embed"

// Verdict is the JSON Schema of one run's verdict.
//
//go:embed verdict.schema.json
var Verdict []byte

// Report is the JSON Schema of one line of report --json; it refers to
// Verdict by its $id.
//
//go:embed report.schema.json
var Report []byte

// The $id of each schema, for resolvers that load both.
const (
	VerdictID = "urn:databrew-stage:schema:verdict"
	ReportID  = "urn:databrew-stage:schema:report"
)
