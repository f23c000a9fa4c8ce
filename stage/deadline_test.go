package stage

import (
	"context"
	"testing"
	"time"

	"github.com/databrew/databrew-stage/config"
	"github.com/databrew/databrew-stage/internal/catalogsite"
	"github.com/databrew/databrew-stage/verdict"
)

// cardExtraction reads the items of the catalog's listing cards: a run
// stores a whole listing page's items after one request.
const cardExtraction = `
[listing]
items = "article.product_pod"
next_page = "li.next a"

[item]
key = "upc"

[item.fields]
title = { css = "div.product_main h1", required = true }
price = { css = "p.price_color", type = "float64", regex = '[0-9]+\.[0-9]+', required = true }
upc = { css = "table tr:nth-child(1) td", required = true }
`

// outlastedRows is more rows than the export writes between two looks at
// its context (1,024).
const outlastedRows = 1500

// outlastingCrawl is a catalog whose first listing page holds
// outlastedRows cards and whose second page never answers, and its
// config: the crawl stores outlastedRows items in its first requests and
// then always outlasts its deadline.
func outlastingCrawl(t *testing.T) (*fixture, config.Config) {
	t.Helper()
	f := newFixture(t, catalogsite.Options{Items: 2 * outlastedRows, PerPage: outlastedRows})
	f.site.AddFault(catalogsite.Fault{Kind: catalogsite.FaultHang, PathPrefix: "/catalogue/page-2"})
	return f, f.configOf(cardExtraction, map[string]string{"timeout": `"60s"`}, "")
}

// deadlineSoon is a deadline the crawl of outlastingCrawl meets having
// stored its first page, on a loaded machine too.
func deadlineSoon() time.Time { return time.Now().Add(3 * time.Second) }

// expectStoppedByTheDeadline checks the run ended interrupted, having
// stored the first page.
func expectStoppedByTheDeadline(t *testing.T, rep verdict.RunReport) {
	t.Helper()
	if rep.Stop != verdict.StopInterrupted || rep.Outcome != verdict.OutcomePartial {
		t.Fatalf("verdict = %s (%s): %q", rep.Outcome, rep.Stop, rep.Detail)
	}
	if rep.Items.New != outlastedRows {
		t.Fatalf("the crawl stored %d items before its deadline, want %d", rep.Items.New, outlastedRows)
	}
}

// expectPublishedOnce checks that the output holds n items, each in one
// published run.
func expectPublishedOnce(t *testing.T, cfg config.Config, n int) {
	t.Helper()
	keys := publishedKeys(t, cfg.Output)
	if len(keys) != n {
		t.Fatalf("%d items published, want %d", len(keys), n)
	}
	for k, c := range keys {
		if c != 1 {
			t.Fatalf("item %s published %d times", k, c)
		}
	}
}

// TestDeadline_TheExportOfWhatTheCrawlStoredFollows: a crawl that always
// outlasts its deadline, with more rows pending than the export writes
// between two looks at its context, publishes them: the deadline bounds
// the crawl, and the export has its own time after it.
func TestDeadline_TheExportOfWhatTheCrawlStoredFollows(t *testing.T) {
	f, cfg := outlastingCrawl(t)
	rep := f.run(cfg, Options{Deadline: deadlineSoon()})
	expectStoppedByTheDeadline(t, rep)
	if rep.Detail != "Deadline reached" || !rep.Export.Published || rep.Export.Failed || rep.Export.Rows != outlastedRows {
		t.Fatalf("detail %q, export %+v: want %d rows published", rep.Detail, rep.Export, outlastedRows)
	}
	expectPublishedOnce(t, cfg, outlastedRows)
}

// TestDeadline_TheExportHasATimeLimitOfItsOwn: an export that outlasts
// its own time after the deadline is abandoned as a signal abandons it:
// nothing is published, the detail says why, and the items stay pending
// for the next run, which publishes each once.
func TestDeadline_TheExportHasATimeLimitOfItsOwn(t *testing.T) {
	f, cfg := outlastingCrawl(t)
	rep := f.run(cfg, Options{Deadline: deadlineSoon(), ExportTimeout: time.Nanosecond})
	expectStoppedByTheDeadline(t, rep)
	want := "Deadline reached; the export did not finish within its time limit (1ns after the deadline): nothing is published, its items stay pending for the next run"
	if rep.Detail != want || rep.Export.Published || !rep.Export.Failed || rep.Export.Reason != want {
		t.Fatalf("detail %q, export %+v; want the detail %q", rep.Detail, rep.Export, want)
	}
	expectPublishedOnce(t, cfg, 0)

	f.site.ClearFaults()
	next := f.run(cfg, Options{})
	if !next.Export.Published || next.Export.Rows != 2*outlastedRows {
		t.Fatalf("next run: export %+v, want %d rows", next.Export, 2*outlastedRows)
	}
	expectPublishedOnce(t, cfg, 2*outlastedRows)
}

// TestDeadline_ASignalStillStopsTheExport: after a deadline stop, the
// run's context (a signal) still abandons an export not yet recorded.
func TestDeadline_ASignalStillStopsTheExport(t *testing.T) {
	f, cfg := outlastingCrawl(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	signalAtStaging := func(s PublishStep) error {
		if s == StepIntent {
			cancel(errSignal)
		}
		return nil
	}
	rep := f.runCtx(ctx, cfg, Options{Deadline: deadlineSoon(), AfterPublishStep: signalAtStaging})
	expectStoppedByTheDeadline(t, rep)
	want := "Interrupted by SIGINT during the export: nothing is published, its items stay pending for the next run"
	if rep.Detail != want || rep.Export.Published || !rep.Export.Failed {
		t.Fatalf("detail %q, export %+v; want the detail %q", rep.Detail, rep.Export, want)
	}
	expectPublishedOnce(t, cfg, 0)
}

// TestDeadline_TheExportIntoObjectStorageFollows: into S3 too, where
// every request of the export took the deadline's ended context, the
// export of what the crawl stored follows its deadline.
func TestDeadline_TheExportIntoObjectStorageFollows(t *testing.T) {
	l := newLake(t)
	f, cfg := outlastingCrawl(t)
	cfg.Output = l.url()
	rep := f.run(cfg, Options{Deadline: deadlineSoon()})
	expectStoppedByTheDeadline(t, rep)
	if rep.Detail != "Deadline reached" || !rep.Export.Published || rep.Export.Rows != outlastedRows {
		t.Fatalf("detail %q, export %+v: want %d rows published", rep.Detail, rep.Export, outlastedRows)
	}
	keys := publishedKeys(t, l.download(t))
	if len(keys) != outlastedRows {
		t.Fatalf("%d items in the lake, want %d", len(keys), outlastedRows)
	}
}
