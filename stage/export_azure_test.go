package stage

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/azuritetest"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/verdict"
)

// newAzureLake starts Azurite and opens the prefix "exports" of its
// container with the test's own client.
func newAzureLake(t *testing.T) *lake {
	t.Helper()
	srv := azuritetest.Start(t)
	srv.SetEnv(t)
	return openLake(t, srv, "exports")
}

// TestObjectStore_ARunPublishesIntoAzureBlob publishes 50 items into
// Azurite: one run prefix holding one part file, _verdict.json,
// _manifest.json and _SUCCESS, the output's _verdict.json, nothing else;
// an unchanged site publishes nothing more; a changed item publishes one
// row.
func TestObjectStore_ARunPublishesIntoAzureBlob(t *testing.T) {
	l := newAzureLake(t)
	if l.t.HidesParts() {
		t.Fatal("HidesParts = true on azblob://")
	}
	f := newFixture(t, catalogsite.Options{Items: 50})
	cfg := l.configIn(f, "\n[export]\nmax_file_rows = 10\n")
	rep := f.run(cfg, Options{})
	expect(t, rep, verdict.StopQueueEmpty, verdict.OutcomeSuccess, 2)
	runDir := "dt=" + rep.StartedAt.Format("2006-01-02") + "/run=" + rep.RunID
	want := []string{sink.VerdictFile, runDir + "/" + sink.SuccessFile, runDir + "/" + sink.ManifestFile,
		runDir + "/" + sink.VerdictFile, runDir + "/part-00000.parquet"}
	slices.Sort(want)
	if got := l.keys(t); !slices.Equal(got, want) {
		t.Fatalf("objects %q, want %q", got, want)
	}
	if !rep.Export.Published || rep.Export.Rows != 50 ||
		rep.Export.Path != "azblob://lake/exports/"+runDir+"/" {
		t.Fatalf("export %+v", rep.Export)
	}
	expectEachItemOnceInLake(t, f, l)
	root, err := l.t.Read(context.Background(), l.t.Key(sink.VerdictFile))
	if err != nil || !strings.Contains(string(root), rep.RunID) {
		t.Fatalf("the output's _verdict.json (%v) is not run 1's: %s", err, root)
	}

	rep2 := f.run(cfg, Options{})
	if rep2.Export.Published {
		t.Fatalf("an unchanged site published again: %+v", rep2.Export)
	}
	f.site.SetPrice(3, 99.5)
	rep3 := f.run(cfg, Options{})
	if !rep3.Export.Published || rep3.Export.Rows != 1 {
		t.Fatalf("a changed item: export %+v, want one row", rep3.Export)
	}
	if _, committed := l.runPrefixes(t); len(committed) != 2 {
		t.Fatalf("committed runs %v, want 2", committed)
	}
}

// TestObjectStore_APublishCutAtAnyStepReachesAzureBlobExactlyOnce abandons
// a publish into Azurite after each step of its protocol, as a crash
// would, then runs again: every item reaches exactly one committed run and
// no run prefix holds objects without _SUCCESS. There the part is visible
// once uploaded; a rolled-back publish deletes it. One server serves every
// step, each under its own prefix.
func TestObjectStore_APublishCutAtAnyStepReachesAzureBlobExactlyOnce(t *testing.T) {
	srv := azuritetest.Start(t)
	srv.SetEnv(t)
	for _, step := range ObjectPublishSteps {
		t.Run(string(step), func(t *testing.T) {
			publishCutAt(t, openLake(t, srv, "exports-"+string(step)), step)
		})
	}
}
