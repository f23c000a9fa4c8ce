package lineage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/databrew/databrew-stage/verdict"
)

// Events are validated against two sets of JSON Schemas:
//
//   - Always, against test schemas of this package in testdata, written for
//     these tests from the rules the OpenLineage spec 2-0-2 documents (the
//     RunEvent's fields and formats, the facets every facet object carries,
//     and the schema, outputStatistics and errorMessage facets), and against
//     the custom facet's schema DatabrewStageRunFacet.json. They are not
//     the spec's own files, which the repository does not ship.
//   - Also, when the environment variable OPENLINEAGE_SPEC_DIR names a
//     folder holding the official schemas (OpenLineage.json of spec 2-0-2
//     and the facet files named in officialFiles, as openlineage.io
//     publishes them), against those:
//
//     OPENLINEAGE_SPEC_DIR=/path/to/spec go test ./lineage/ -run Spec -v
//
// Each file is registered under its $id, so the $refs between files
// resolve offline; nothing is fetched.

// specEnv names the folder of the official schemas.
const specEnv = "OPENLINEAGE_SPEC_DIR"

// stageFacetFile is the custom run facet's schema, ours in either set.
const stageFacetFile = "DatabrewStageRunFacet.json"

// ownFiles are the test schemas: the RunEvent, then the schema,
// outputStatistics and errorMessage facets (each file's root checks the
// facet under its key in a facets object), then the custom facet, then
// more dataset facets (an Iceberg table's symlinks, version and storage).
var ownFiles = []string{
	"testdata/runevent.schema.json",
	"testdata/schema-facet.schema.json",
	"testdata/output-statistics-facet.schema.json",
	"testdata/error-message-facet.schema.json",
	stageFacetFile,
	"testdata/table-facets.schema.json",
}

// officialFiles are the file names of the official schemas in
// OPENLINEAGE_SPEC_DIR, in the order of ownFiles (the custom facet, ours,
// comes after the first four), with the schema URL whose document each
// must be.
var officialFiles = []struct{ name, url string }{
	{"OpenLineage.json", RunEventSchemaURL},
	{"SchemaDatasetFacet.json", SchemaFacetURL},
	{"OutputStatisticsOutputDatasetFacet.json", OutputStatisticsFacetURL},
	{"ErrorMessageRunFacet.json", ErrorMessageFacetURL},
	{"SymlinksDatasetFacet.json", SymlinksFacetURL},
	{"DatasetVersionDatasetFacet.json", VersionFacetURL},
	{"StorageDatasetFacet.json", StorageFacetURL},
}

// officialFixed is how many of officialFiles come before the custom
// facet's schema; the rest are more dataset facets.
const officialFixed = 4

// spec holds one set's compiled schemas: the RunEvent, and each facet
// file's root, which checks the facet under its key in a facets object;
// datasetFacets check an output's facets object besides schema.
type spec struct {
	name                                                 string
	event, schema, outputStatistics, errorMessage, stage *jsonschema.Schema
	datasetFacets                                        []*jsonschema.Schema
}

// compileSpec registers each file under its $id, and extra documents under
// their URLs, and compiles the files' roots in the order of ownFiles.
func compileSpec(name string, paths []string, extra map[string]any) (spec, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for url, doc := range extra {
		if err := c.AddResource(url, doc); err != nil {
			return spec{}, fmt.Errorf("%s: %w", url, err)
		}
	}
	ids := make([]string, len(paths))
	for i, path := range paths {
		id, doc, err := readSchema(path)
		if err != nil {
			return spec{}, err
		}
		if err := c.AddResource(id, doc); err != nil {
			return spec{}, fmt.Errorf("%s: %w", path, err)
		}
		ids[i] = id
	}
	s := spec{name: name}
	targets := []**jsonschema.Schema{&s.event, &s.schema, &s.outputStatistics, &s.errorMessage, &s.stage}
	for i, id := range ids {
		compiled, err := c.Compile(id)
		if err != nil {
			return spec{}, err
		}
		if i < len(targets) {
			*targets[i] = compiled
		} else {
			s.datasetFacets = append(s.datasetFacets, compiled)
		}
	}
	return s, nil
}

// readSchema reads a schema file and its $id.
func readSchema(path string) (id string, doc any, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	doc, err = jsonschema.UnmarshalJSON(f)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	m, _ := doc.(map[string]any)
	id, _ = m["$id"].(string)
	if id == "" {
		return "", nil, fmt.Errorf("%s has no $id", path)
	}
	return id, doc, nil
}

var (
	ownOnce sync.Once
	ownSpec spec
	ownErr  error

	officialOnce sync.Once
	officialSpec spec
	officialErr  error
)

// loadOwnSpec compiles the test schemas. The custom facet's schema refers
// to the RunFacet of the official spec's URL; a stand-in document under
// that URL sends the reference to the test schema's facet definition.
func loadOwnSpec() (spec, error) {
	ownOnce.Do(func() {
		runEventID, _, err := readSchema(ownFiles[0])
		if err != nil {
			ownErr = err
			return
		}
		standIn := map[string]any{"$defs": map[string]any{
			"RunFacet": map[string]any{"$ref": runEventID + "#/$defs/facet"},
		}}
		ownSpec, ownErr = compileSpec("test schemas", ownFiles, map[string]any{SpecURL: standIn})
	})
	return ownSpec, ownErr
}

// loadOfficialSpec compiles the official schemas in OPENLINEAGE_SPEC_DIR;
// ok is false when the variable is unset.
func loadOfficialSpec() (s spec, ok bool, err error) {
	dir := os.Getenv(specEnv)
	if dir == "" {
		return spec{}, false, nil
	}
	officialOnce.Do(func() {
		paths := make([]string, 0, len(officialFiles)+1)
		for i, f := range officialFiles {
			if i == officialFixed {
				paths = append(paths, stageFacetFile)
			}
			paths = append(paths, filepath.Join(dir, f.name))
		}
		officialSpec, officialErr = compileSpec("official schemas in "+dir, paths, nil)
	})
	return officialSpec, true, officialErr
}

// specs returns the sets to validate against: the test schemas, and the
// official ones when OPENLINEAGE_SPEC_DIR is set.
func specs(t *testing.T) []spec {
	t.Helper()
	own, err := loadOwnSpec()
	if err != nil {
		t.Fatalf("load the test schemas: %v", err)
	}
	official, ok, err := loadOfficialSpec()
	if err != nil {
		t.Fatalf("load the official schemas (%s): %v", specEnv, err)
	}
	if !ok {
		return []spec{own}
	}
	return []spec{own, official}
}

// validateEvent checks one encoded event against every set of specs: the
// RunEvent schema, then every facet it carries against its facet's schema.
// It returns the decoded event for further checks.
func validateEvent(t *testing.T, line []byte) map[string]any {
	t.Helper()
	for _, s := range specs(t) {
		if err := checkEvent(s, line); err != nil {
			t.Fatalf("event does not follow the %s: %v\n%s", s.name, err, line)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// checkEvent validates line against s; see validateEvent.
func checkEvent(s spec, line []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := s.event.Validate(doc); err != nil {
		return err
	}
	ev := doc.(map[string]any)
	runFacets := ev["run"].(map[string]any)["facets"]
	for _, check := range []struct {
		name   string
		schema *jsonschema.Schema
		facets any
	}{
		{"run facets (errorMessage)", s.errorMessage, runFacets},
		{"run facets (databrew_stage)", s.stage, runFacets},
	} {
		if err := check.schema.Validate(check.facets); err != nil {
			return fmt.Errorf("%s: %w", check.name, err)
		}
	}
	outputs, _ := ev["outputs"].([]any)
	for i, o := range outputs {
		ds := o.(map[string]any)
		if facets, ok := ds["facets"]; ok {
			for _, schema := range append([]*jsonschema.Schema{s.schema}, s.datasetFacets...) {
				if err := schema.Validate(facets); err != nil {
					return fmt.Errorf("outputs[%d].facets: %w", i, err)
				}
			}
		}
		if facets, ok := ds["outputFacets"]; ok {
			if err := s.outputStatistics.Validate(facets); err != nil {
				return fmt.Errorf("outputs[%d].outputFacets: %w", i, err)
			}
		}
	}
	return nil
}

// sampleEvents are the events of the tracker tests, encoded: START, the
// COMPLETE of a published run (local and in S3) and of an unproductive
// one, and the FAIL of a failed run, a failed export and a run that never
// started.
func sampleEvents(t *testing.T) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	tr := newTestTracker(t, dir)
	events := map[string][]byte{
		"START":                   mustJSON(t, tr.Start(testStart)),
		"COMPLETE published":      mustJSON(t, tr.End(publishedReport(t, dir))),
		"FAIL":                    mustJSON(t, newTestTracker(t, t.TempDir()).End(failedReport())),
		"FAIL never started":      mustJSON(t, newTestTracker(t, t.TempDir()).End(lockedReport())),
		"COMPLETE unproductive":   mustJSON(t, newTestTracker(t, t.TempDir()).End(unproductiveReport())),
		"FAIL of a failed export": mustJSON(t, newTestTracker(t, t.TempDir()).End(failedExportReport())),
	}
	cfg := testConfig(t.TempDir())
	cfg.Output = "s3://lake/crawls/books?region=eu-west-1"
	s3, err := NewTracker(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	events["COMPLETE published to S3"] = mustJSON(t, s3.End(publishedReport(t, t.TempDir())))
	shard := logicalTracker(t, t.TempDir()).Shard("1-of-4")
	events["START of a shard"] = mustJSON(t, shard.Start(testStart))
	events["RUNNING of a shard"] = mustJSON(t, shard.End(shardReport("1-of-4", verdict.OutcomeSuccess)))
	events["RUNNING of a failed shard"] = mustJSON(t, shard.End(shardReport("1-of-4", verdict.OutcomeFailed)))
	commitDir := t.TempDir()
	events["COMPLETE of a commit"] = mustJSON(t, logicalTracker(t, commitDir).End(commitReport(t, commitDir)))
	ice := icebergTracker(t, testIceberg())
	events["START into an Iceberg table"] = mustJSON(t, ice.Start(testStart))
	events["COMPLETE into an Iceberg table"] = mustJSON(t, ice.End(icebergReport(testSnapshotID)))
	events["COMPLETE of an Iceberg run with nothing new"] = mustJSON(t, ice.End(icebergReport(0)))
	return events
}

// TestSpecAcceptsEvents validates every sample event against the test
// schemas, and the official ones when OPENLINEAGE_SPEC_DIR is set.
func TestSpecAcceptsEvents(t *testing.T) {
	for name, line := range sampleEvents(t) {
		t.Run(name, func(t *testing.T) { validateEvent(t, line) })
	}
}

// TestSpecOfficial validates the sample events against the official
// schemas in OPENLINEAGE_SPEC_DIR, after checking that they are the
// versions the events name; it is skipped when the variable is unset.
func TestSpecOfficial(t *testing.T) {
	s, ok, err := loadOfficialSpec()
	if !ok {
		t.Skipf("%s is unset; to validate events against the official OpenLineage 2-0-2 schemas too, point it at a folder holding %s (as openlineage.io publishes them): %s=/path/to/folder go test ./lineage/ -run Spec -v",
			specEnv, officialNames(), specEnv)
	}
	if err != nil {
		t.Fatalf("load the official schemas: %v", err)
	}
	dir := os.Getenv(specEnv)
	for _, f := range officialFiles {
		id, _, err := readSchema(filepath.Join(dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(f.url, id+"#/$defs/") {
			t.Errorf("%s: $id %s, but events name %s", f.name, id, f.url)
		}
	}
	for name, line := range sampleEvents(t) {
		t.Run(name, func(t *testing.T) {
			if err := checkEvent(s, line); err != nil {
				t.Errorf("the event does not follow the official schemas: %v\n%s", err, line)
			}
		})
	}
}

func officialNames() string {
	names := make([]string, len(officialFiles))
	for i, f := range officialFiles {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// TestSpecRejects proves the validators are live: events broken in ways
// the spec forbids fail them, formats included; the test schemas always,
// the official ones when OPENLINEAGE_SPEC_DIR is set.
func TestSpecRejects(t *testing.T) {
	dir := t.TempDir()
	fail := mustJSON(t, newTestTracker(t, t.TempDir()).End(failedReport()))
	complete := mustJSON(t, newTestTracker(t, dir).End(publishedReport(t, dir)))
	runFacet := func(m map[string]any, key string) map[string]any {
		return m["run"].(map[string]any)["facets"].(map[string]any)[key].(map[string]any)
	}
	outputStatistics := func(m map[string]any) map[string]any {
		return m["outputs"].([]any)[0].(map[string]any)["outputFacets"].(map[string]any)["outputStatistics"].(map[string]any)
	}
	iceberg := mustJSON(t, icebergTracker(t, testIceberg()).End(icebergReport(testSnapshotID)))
	datasetFacet := func(m map[string]any, key string) map[string]any {
		return m["outputs"].([]any)[0].(map[string]any)["facets"].(map[string]any)[key].(map[string]any)
	}
	cases := []struct {
		name    string
		good    []byte
		breakIt func(m map[string]any)
		// ownOnly marks a rule of the test schemas that the official ones
		// leave out.
		ownOnly bool
	}{
		{"runId not a UUID", fail, func(m map[string]any) { m["run"].(map[string]any)["runId"] = "20261130T002305.123Z-3f9a" }, false},
		{"unknown eventType", fail, func(m map[string]any) { m["eventType"] = "DONE" }, false},
		{"eventTime not RFC 3339", fail, func(m map[string]any) { m["eventTime"] = "30/11/2026 00:23" }, false},
		{"producer not a URI", fail, func(m map[string]any) { m["producer"] = "databrew stage" }, false},
		{"no schemaURL", fail, func(m map[string]any) { delete(m, "schemaURL") }, false},
		{"no job name", fail, func(m map[string]any) { delete(m["job"].(map[string]any), "name") }, false},
		{"output without namespace", fail, func(m map[string]any) { delete(m["outputs"].([]any)[0].(map[string]any), "namespace") }, false},
		{"facet without _producer", fail, func(m map[string]any) { delete(runFacet(m, "errorMessage"), "_producer") }, false},
		{"facet _schemaURL not a URI", fail, func(m map[string]any) { runFacet(m, "errorMessage")["_schemaURL"] = "ErrorMessageRunFacet" }, false},
		{"errorMessage without programmingLanguage", fail, func(m map[string]any) { delete(runFacet(m, "errorMessage"), "programmingLanguage") }, false},
		{"schema field without name", fail, func(m map[string]any) {
			schema := m["outputs"].([]any)[0].(map[string]any)["facets"].(map[string]any)["schema"].(map[string]any)
			delete(schema["fields"].([]any)[0].(map[string]any), "name")
		}, false},
		{"rowCount not an integer", complete, func(m map[string]any) { outputStatistics(m)["rowCount"] = 1.5 }, false},
		{"negative rowCount", complete, func(m map[string]any) { outputStatistics(m)["rowCount"] = -1 }, true},
		{"unknown stage outcome", fail, func(m map[string]any) { runFacet(m, "databrew_stage")["outcome"] = "meh" }, false},
		{"stage run id with a slash", fail, func(m map[string]any) { runFacet(m, "databrew_stage")["runId"] = "nightly/1" }, false},
		{"shard not I-of-N", fail, func(m map[string]any) { runFacet(m, "databrew_stage")["shard"] = "2/4" }, false},
		{"symlink without type", iceberg, func(m map[string]any) {
			delete(datasetFacet(m, "symlinks")["identifiers"].([]any)[0].(map[string]any), "type")
		}, false},
		{"symlinks facet without identifiers", iceberg, func(m map[string]any) { delete(datasetFacet(m, "symlinks"), "identifiers") }, false},
		{"datasetVersion a number", iceberg, func(m map[string]any) { datasetFacet(m, "version")["datasetVersion"] = 7340955470153711426 }, false},
		{"version facet without datasetVersion", iceberg, func(m map[string]any) { delete(datasetFacet(m, "version"), "datasetVersion") }, false},
		{"storage facet without storageLayer", iceberg, func(m map[string]any) { delete(datasetFacet(m, "storage"), "storageLayer") }, false},
		{"symlink of another type", iceberg, func(m map[string]any) {
			datasetFacet(m, "symlinks")["identifiers"].([]any)[0].(map[string]any)["type"] = "LOCATION"
		}, true},
	}
	own, _ := loadOwnSpec()
	for _, s := range specs(t) {
		t.Run(s.name, func(t *testing.T) {
			for _, good := range [][]byte{fail, complete, iceberg} {
				if err := checkEvent(s, good); err != nil {
					t.Fatalf("a good event fails: %v\n%s", err, good)
				}
			}
			for _, c := range cases {
				if c.ownOnly && s.name != own.name {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					var m map[string]any
					if err := json.Unmarshal(c.good, &m); err != nil {
						t.Fatal(err)
					}
					c.breakIt(m)
					if err := checkEvent(s, mustJSON(t, m)); err == nil {
						t.Errorf("the broken event passes")
					}
				})
			}
		})
	}
}

// TestSpecVersions: the schema URLs the events carry name the spec
// versions the events follow (RunEvent of 2-0-2; the schema 1-2-0,
// outputStatistics 1-0-2, errorMessage 1-0-1, symlinks 1-0-1, version
// 1-0-0 and storage 1-0-0 facets), and the custom facet's URL names its
// schema's $id.
func TestSpecVersions(t *testing.T) {
	stageID, _, err := readSchema(stageFacetFile)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"event":            "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
		"schema":           "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet",
		"outputStatistics": "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet",
		"errorMessage":     "https://openlineage.io/spec/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet",
		"databrew_stage":   stageID + "#/$defs/DatabrewStageRunFacet",
		"symlinks":         "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json#/$defs/SymlinksDatasetFacet",
		"version":          "https://openlineage.io/spec/facets/1-0-0/DatasetVersionDatasetFacet.json#/$defs/DatasetVersionDatasetFacet",
		"storage":          "https://openlineage.io/spec/facets/1-0-0/StorageDatasetFacet.json#/$defs/StorageDatasetFacet",
	}
	seen := map[string]bool{}
	for name, line := range sampleEvents(t) {
		var ev map[string]any
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatal(err)
		}
		check := func(key string, got any) {
			seen[key] = true
			if got != want[key] {
				t.Errorf("%s: %s names %v, want %s", name, key, got, want[key])
			}
		}
		check("event", ev["schemaURL"])
		facetObjects := []any{get(ev, "run", "facets"), get(ev, "job", "facets")}
		for _, o := range get(ev, "outputs").([]any) {
			facetObjects = append(facetObjects, get(o, "facets"), get(o, "outputFacets"))
		}
		for _, facets := range facetObjects {
			m, _ := facets.(map[string]any)
			for key, facet := range m {
				check(key, get(facet, "_schemaURL"))
			}
		}
	}
	for key := range want {
		if !seen[key] {
			t.Errorf("no sample event carries %s", key)
		}
	}
}
