package stage

import (
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/state"
)

// The states in testdata/legacy were written by the release before the
// publish protocol of one storage port, each cut right after a step of
// that release's protocol as a crash would: a run of 20 items of the
// catalog, into a local folder (folder-STEP.tar.gz: the storage path and
// the output) and into S3 (s3-STEP.tar.gz: the storage path;
// s3-STEP.json: the publications it recorded, the objects of the output
// and the bytes of the upload it left staged).
var (
	legacyFolderSteps = []string{"staging", "staged", "recorded", "renamed", "promoted", "completed"}
	legacyObjectSteps = []string{"intent", "uploaded", "ready", "visible", "completed"}
)

// legacyRolledForward says whether the earlier release's protocol rolled
// a publish cut after step forward: its folder had appeared, or its
// manifest was recorded.
func legacyRolledForward(step string) bool {
	switch step {
	case "renamed", "promoted", "ready", "visible", "completed":
		return true
	}
	return false
}

// untar extracts a fixture into dir.
func untar(t *testing.T, archive, dir string) {
	t.Helper()
	if out, err := exec.Command("tar", "-xzf", archive, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("extract %s: %v %s", archive, err, out)
	}
}

// expectNewOnce checks that every item of the site was published as new
// exactly once across rows (a rerun against the site on another port may
// publish its items again as changed), and returns the run ids that
// published them.
func expectNewOnce(t *testing.T, f *fixture, rows []exported) map[string]bool {
	t.Helper()
	news, runs := map[string]int{}, map[string]bool{}
	for _, r := range rows {
		if r.change == state.ChangeNew {
			news[r.key]++
			runs[r.runID] = true
		}
	}
	for _, it := range f.site.Items() {
		if news[it.UPC] != 1 {
			t.Fatalf("item %s published as new %d times, want once", it.UPC, news[it.UPC])
		}
	}
	if len(news) != len(f.site.Items()) {
		t.Fatalf("%d items published as new, the site has %d", len(news), len(f.site.Items()))
	}
	return runs
}

// TestLegacy_AFolderPublishInFlightFinishesOnce: a state and output the
// earlier release left with a publish cut at each step of its protocol.
// This release's run reconciles them: a publish whose run folder had
// appeared is completed (never published again), one whose had not is
// forgotten and its items published by this run; every item is published
// as new once, and no staging of either release is left.
func TestLegacy_AFolderPublishInFlightFinishesOnce(t *testing.T) {
	for _, step := range legacyFolderSteps {
		t.Run(step, func(t *testing.T) {
			f := newFixture(t, catalogsite.Options{Items: 20})
			untar(t, filepath.Join("testdata", "legacy", "folder-"+step+".tar.gz"), f.dir)
			cfg := f.config(nil, "")
			db, err := state.Open(cfg.Storage, state.Options{})
			if err != nil {
				t.Fatal(err)
			}
			pubs, err := db.Publishing()
			db.Close()
			wantPubs := 1
			if step == "staging" || step == "staged" {
				wantPubs = 0 // that release recorded the publish after staging
			}
			if err != nil || len(pubs) != wantPubs || (wantPubs == 1 && (pubs[0].Protocol != 0 || pubs[0].Staging == "")) {
				t.Fatalf("the fixture's publications: %+v (%v)", pubs, err)
			}
			rep := f.run(cfg, Options{})
			var rows []exported
			dirs, _ := filepath.Glob(filepath.Join(cfg.Output, "dt=*", "run=*"))
			for _, dir := range dirs {
				rows = append(rows, readRun(t, dir)...)
			}
			runs := expectNewOnce(t, f, rows)
			if legacyRolledForward(step) == runs[rep.RunID] || len(runs) != 1 {
				t.Fatalf("after %s: items published as new by runs %v; this run is %s", step, runs, rep.RunID)
			}
			expectNoStagedDebris(t, cfg.Output)
			db, err = state.Open(cfg.Storage, state.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if pubs, err := db.Publishing(); err != nil || len(pubs) != 0 {
				t.Fatalf("publications left: %+v (%v)", pubs, err)
			}
		})
	}
}

// legacyLake is what the earlier release left in S3 (see testdata/legacy).
type legacyLake struct {
	Publications []state.Publication `json:"publications"`
	Objects      []struct {
		Key  string `json:"key"`
		Data []byte `json:"data"`
	} `json:"objects"`
	Uploads []struct {
		Key  string `json:"key"`
		Data []byte `json:"data"`
	} `json:"uploads"`
}

// TestLegacy_AnS3PublishInFlightFinishesOnce: the earlier release's
// state with a publish into S3 cut at each step, and what it left in the
// bucket — its objects, and its part's multipart upload left open, made
// again here (an upload cannot be copied: the record is given the new
// upload's id and the server's new address, nothing else). This release's
// run rolls a publish that had its manifest forward and one that had not
// back, and every item is published as new once, with no upload left.
func TestLegacy_AnS3PublishInFlightFinishesOnce(t *testing.T) {
	for _, step := range legacyObjectSteps {
		t.Run(step, func(t *testing.T) {
			l := newLake(t)
			f := newFixture(t, catalogsite.Options{Items: 20})
			untar(t, filepath.Join("testdata", "legacy", "s3-"+step+".tar.gz"), f.dir)
			raw, err := os.ReadFile(filepath.Join("testdata", "legacy", "s3-"+step+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var left legacyLake
			if err := json.Unmarshal(raw, &left); err != nil || len(left.Publications) != 1 {
				t.Fatalf("fixture: %v, %d publications", err, len(left.Publications))
			}
			cfg := l.configIn(f, "")
			s := l.t.Storage()
			for _, o := range left.Objects {
				if err := s.Put(t.Context(), o.Key, o.Data); err != nil {
					t.Fatal(err)
				}
			}
			pub := left.Publications[0]
			runPrefix := strings.TrimPrefix(pub.Dir, l.prefix+"/")
			if len(left.Uploads) == 1 {
				w, err := s.StagePart(t.Context(), runPrefix+"part-00000.parquet")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.Write(left.Uploads[0].Data); err != nil {
					t.Fatal(err)
				}
				part, err := w.Finish()
				if err != nil {
					t.Fatal(err)
				}
				if pub.Uploads != nil {
					pub.Uploads[path.Base(part.Key)] = part.Token
				}
			}
			pub.Target = l.url()
			db, err := state.Open(cfg.Storage, state.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.BeginPublish(pub); err != nil {
				t.Fatal(err)
			}
			db.Close()

			rep := f.run(cfg, Options{})
			_, committed := l.runPrefixes(t)
			if us := l.uploads(t); len(us) > 0 {
				t.Fatalf("multipart uploads left: %v", us)
			}
			out := l.download(t)
			var rows []exported
			for _, c := range committed {
				rows = append(rows, readRun(t, filepath.Join(out, filepath.FromSlash(c)))...)
			}
			runs := expectNewOnce(t, f, rows)
			if legacyRolledForward(step) == runs[rep.RunID] || len(runs) != 1 {
				t.Fatalf("after %s: items published as new by runs %v; this run is %s", step, runs, rep.RunID)
			}
		})
	}
}
