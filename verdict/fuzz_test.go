package verdict

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// FuzzRunReport decodes arbitrary JSON as a verdict: an unknown stop or
// outcome is refused, a missing one is left empty and caught by Validate,
// and a valid report encodes to JSON that decodes to an equal report and
// encodes to the same bytes.
func FuzzRunReport(f *testing.F) {
	at := time.Date(2026, 11, 30, 0, 23, 5, 0, time.UTC)
	full := RunReport{
		Config: "books", RunID: "20261130T002305Z-3f9a", SchemaVersion: SchemaVersion,
		StartedAt: at, FinishedAt: at.Add(65 * time.Second),
		Outcome: OutcomeSuccess, Rule: 2, Productive: true, Started: true,
		Crawl: Crawl{
			Stop:         StopQueueEmpty,
			Requests:     RequestCounts{Total: 1062, OK: 1050, Neutral: 4, Failed: 8, Retried: 12},
			Items:        ItemCounts{New: 1000},
			Traversal:    Traversal{ID: 1, Started: true, Completed: true, Gaps: 2},
			CoverageGaps: 2, Gaps: []Gap{{URL: "http://127.0.0.1:8390/catalogue/item-7.html", Reason: "HTTP 500"}},
			Breaker: Breaker{Trips: 1, Probes: 1, Events: []BreakerEvent{{At: at, Kind: "trip", Request: 40, Failed: 25, Of: 40}}},
		},
		Export: Export{Published: true, Path: "/lake/books/dt=2026-11-30/run=20261130T002305Z-3f9a", Files: []string{"part-00000.parquet"}, Rows: 1003},
	}
	for _, r := range []RunReport{full, NotStarted("books", at), Locked("books", at, "storage state/books is in use by another process")} {
		b, err := json.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`{}`,
		`{"stop":"done","outcome":"success"}`,
		`{"stop":"queue_empty","outcome":"fine"}`,
		`{"stop":null,"outcome":null}`,
		`{"STOP":"error","Outcome":"failed","started_at":"2026-11-30T01:23:05+01:00","gaps":null}`,
		`{"stop":"error","outcome":"failed","finished_at":"0000-01-01T00:00:00-23:59","breaker":{"events":[{"at":"9999-12-31T23:59:59.999999999Z"}]}}`,
		`{"stop":"interrupted","outcome":"partial","detail":"\ud800\u0000\xff","stop":"blocked"}`,
		`[1,2]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r RunReport
		err := json.Unmarshal(data, &r)
		var plain struct {
			Stop    *string `json:"stop"`
			Outcome *string `json:"outcome"`
		}
		if json.Unmarshal(data, &plain) == nil && err == nil {
			if plain.Stop != nil && !Stop(*plain.Stop).Valid() || plain.Outcome != nil && !Outcome(*plain.Outcome).Valid() {
				t.Fatalf("decoded a report with an unknown stop or outcome: %s", data)
			}
		}
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			if (r.Stop != "" && !r.Stop.Valid()) || (r.Outcome != "" && !r.Outcome.Valid()) {
				t.Fatalf("decoder kept an unknown stop %q or outcome %q", r.Stop, r.Outcome)
			}
			return
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("a valid decoded report does not encode: %v\n%s", err, data)
		}
		var again RunReport
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("a report's own JSON does not decode: %v\n%s", err, b)
		}
		if !sameReport(r, again) {
			t.Fatalf("report changed on a round trip:\n%+v\n%+v", r, again)
		}
		if b2, err := json.Marshal(again); err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("re-encoding differs:\n%s\n%s (%v)", b, b2, err)
		}
		_ = r.Summary()
	})
}

// sameReport compares reports field by field, times by instant and offset
// (a decoded time's *Location depends on the machine's zone).
func sameReport(a, b RunReport) bool {
	if !sameTime(a.StartedAt, b.StartedAt) || !sameTime(a.FinishedAt, b.FinishedAt) || len(a.Breaker.Events) != len(b.Breaker.Events) {
		return false
	}
	for i := range a.Breaker.Events {
		if !sameTime(a.Breaker.Events[i].At, b.Breaker.Events[i].At) {
			return false
		}
	}
	strip := func(r RunReport) RunReport {
		r.StartedAt, r.FinishedAt = time.Time{}, time.Time{}
		if r.Breaker.Events != nil {
			events := make([]BreakerEvent, len(r.Breaker.Events))
			for i, e := range r.Breaker.Events {
				e.At = time.Time{}
				events[i] = e
			}
			r.Breaker.Events = events
		}
		return r
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

func sameTime(a, b time.Time) bool {
	_, ao := a.Zone()
	_, bo := b.Zone()
	return a.Equal(b) && ao == bo
}
