package verdict

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestSummaryLine(t *testing.T) {
	start := time.Date(2026, 11, 30, 0, 23, 5, 0, time.UTC)
	r := RunReport{
		Config: "books", Started: true, Outcome: OutcomeSuccess,
		StartedAt: start, FinishedAt: start.Add(4100 * time.Millisecond),
		Crawl: Crawl{Stop: StopQueueEmpty, Requests: RequestCounts{Total: 1062}, Items: ItemCounts{New: 12, Changed: 3}, CoverageGaps: 2},
	}
	want := "books: success (queue_empty) · 1062 requests · 12 new · 3 changed · 2 coverage gaps · 4.1s"
	if got := r.Summary(); got != want {
		t.Fatalf("summary:\n got %q\nwant %q", got, want)
	}
	r.Detail = "Reached max requests limit (20)"
	if got := r.Summary(); !strings.HasSuffix(got, " · Reached max requests limit (20)") {
		t.Fatalf("summary must end with the detail: %q", got)
	}
	r.Detail, r.Shard, r.RunID, r.Export = "", "2-of-4", "nightly-1", Export{Staged: true, Rows: 15}
	want = "books [shard 2-of-4 of run nightly-1]: success (queue_empty) · 1062 requests · 12 new · 3 changed · 2 coverage gaps · 4.1s · 15 rows staged for the commit"
	if got := r.Summary(); got != want {
		t.Fatalf("a shard's summary:\n got %q\nwant %q", got, want)
	}
}

func TestUnstartedReports(t *testing.T) {
	at := time.Now()
	ns := NotStarted("books", at)
	if ns.Outcome != OutcomeFailed || ns.Detail != "Not started" || ns.Started {
		t.Fatalf("not started report = %+v", ns)
	}
	lk := Locked("books", at, "storage state/books is in use by another process")
	if lk.Outcome != OutcomeFailed || lk.Stop != StopError || !strings.Contains(lk.Detail, "state/books") {
		t.Fatalf("locked report = %+v", lk)
	}
	if got := ns.Summary(); got != "books: failed (interrupted) · Not started" {
		t.Fatalf("summary = %q", got)
	}
}

func TestNextEmptyRunStreak(t *testing.T) {
	if NextEmptyRunStreak(4, true) != 0 || NextEmptyRunStreak(4, false) != 5 || NextEmptyRunStreak(0, false) != 1 {
		t.Fatal("streak arithmetic is wrong")
	}
}

func TestValidate(t *testing.T) {
	ok := NotStarted("books", time.Now())
	if err := ok.Validate(); err != nil {
		t.Fatalf("a not-started report is valid, got %v", err)
	}
	for name, tbl := range map[string]*Table{
		"committed":           {Format: TableFormatIceberg, Name: "shop.books", Catalog: "sqlite:///c.db", Location: "file:///w/shop.db/books", SnapshotID: 1},
		"nothing committed":   {Format: TableFormatIceberg, Name: "shop.books"},
		"largest snapshot id": {Format: TableFormatIceberg, Name: "shop.books", SnapshotID: math.MaxInt64},
	} {
		r := RunReport{Crawl: Crawl{Stop: StopQueueEmpty}, Outcome: OutcomeSuccess, Export: Export{Table: tbl}}
		if err := r.Validate(); err != nil {
			t.Errorf("%s: a valid table refused: %v", name, err)
		}
	}
	for name, r := range map[string]RunReport{
		"no stop":         {Outcome: OutcomeFailed},
		"no outcome":      {Crawl: Crawl{Stop: StopError}},
		"unknown stop":    {Crawl: Crawl{Stop: "done"}, Outcome: OutcomeSuccess},
		"unknown outcome": {Crawl: Crawl{Stop: StopQueueEmpty}, Outcome: "fine"},
		"table without a format": {Crawl: Crawl{Stop: StopQueueEmpty}, Outcome: OutcomeSuccess,
			Export: Export{Table: &Table{Name: "shop.books"}}},
		"table without a name": {Crawl: Crawl{Stop: StopQueueEmpty}, Outcome: OutcomeSuccess,
			Export: Export{Table: &Table{Format: TableFormatIceberg}}},
		"negative snapshot id": {Crawl: Crawl{Stop: StopQueueEmpty}, Outcome: OutcomeSuccess,
			Export: Export{Table: &Table{Format: TableFormatIceberg, Name: "shop.books", SnapshotID: -1}}},
	} {
		if err := r.Validate(); err == nil {
			t.Errorf("%s: report accepted", name)
		}
	}
}

func TestFailsDownstreamWhenFailedOrTheExportFailed(t *testing.T) {
	for _, tc := range []struct {
		outcome      Outcome
		exportFailed bool
		want         bool
	}{
		{OutcomeSuccess, false, false},
		{OutcomePartial, false, false},
		{OutcomeFailed, false, true},
		{OutcomePartial, true, true},
		{OutcomeSuccess, true, true},
	} {
		r := RunReport{Outcome: tc.outcome, Export: Export{Failed: tc.exportFailed}}
		if got := r.FailsDownstream(); got != tc.want {
			t.Errorf("outcome %s, export failed %v: FailsDownstream = %v, want %v", tc.outcome, tc.exportFailed, got, tc.want)
		}
	}
}

// TestExportTableJSON: the table object is left out for an output that
// is not a table, its snapshot id is an exact 64-bit integer, and a run
// that committed nothing leaves the id out.
func TestExportTableJSON(t *testing.T) {
	encode := func(e Export) string {
		t.Helper()
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := encode(Export{Files: []string{}}); strings.Contains(got, `"table"`) {
		t.Errorf("an export that is no table names one: %s", got)
	}
	const id = int64(math.MaxInt64 - 1) // beyond a float64's exact integers
	e := Export{Published: true, Files: []string{}, Table: &Table{Format: TableFormatIceberg, Name: "shop.books",
		Catalog: "sqlite:///c.db", Location: "file:///w/shop.db/books", SnapshotID: id}}
	got := encode(e)
	want := `"table":{"format":"iceberg","name":"shop.books","catalog":"sqlite:///c.db","location":"file:///w/shop.db/books","snapshot_id":9223372036854775806}`
	if !strings.Contains(got, want) {
		t.Errorf("export = %s, want it to hold %s", got, want)
	}
	var back Export
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatal(err)
	}
	if back.Table == nil || *back.Table != *e.Table {
		t.Errorf("decoded table = %+v, want %+v", back.Table, e.Table)
	}
	e.Table.SnapshotID, e.Table.Location = 0, ""
	if got := encode(e); !strings.Contains(got, `"table":{"format":"iceberg","name":"shop.books","catalog":"sqlite:///c.db"}`) {
		t.Errorf("a table nothing was committed into: %s", got)
	}
}
