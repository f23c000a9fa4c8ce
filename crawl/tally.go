package crawl

import (
	"fmt"

	"github.com/databrew/databrew-stage/verdict"
)

// tally accounts for a run: its requests and URL results, the facts the
// outcome rules read, its coverage gaps, and the item changes the store
// committed.
type tally struct {
	requests verdict.RequestCounts
	facts    verdict.Facts
	items    Committed
	// failed holds the URLs that failed in this run and were not fetched
	// successfully since, with the gap each leaves.
	failed     map[string]verdict.Gap
	unusable   int
	gapSamples []verdict.Gap
	// usableItems and unusableItems count the items the run read and could
	// or could not use (item pages, cards, rows).
	usableItems, unusableItems int
	// firstCause is the first URL that failed or answered with a gap;
	// starts holds whether each start URL's last result did;
	// emptyListing is the first start URL whose listing yielded nothing:
	// what a failed run's detail names.
	firstCause   verdict.Gap
	starts       map[string]bool
	emptyListing string
}

func newTally() *tally { return &tally{failed: map[string]verdict.Gap{}, starts: map[string]bool{}} }

// sent counts a completion's HTTP exchanges.
func (t *tally) sent(c *completion) {
	t.requests.Total += c.requests
	t.requests.Retried += c.retries
}

// result counts a finished URL's result, its gaps and the facts it
// established.
func (t *tally) result(c *completion) {
	if c.robotsExcluded {
		t.requests.RobotsExcluded++
	}
	if c.notModified {
		t.requests.NotModified++
	}
	switch c.class {
	case verdict.ClassOK:
		t.requests.OK++
		delete(t.failed, c.q.URL)
	case verdict.ClassNeutral:
		t.requests.Neutral++
		delete(t.failed, c.q.URL)
	case verdict.ClassFailure:
		t.requests.Failed++
		t.failed[c.q.URL] = c.gapOf()
	}
	if c.gap {
		t.gap(c.gapOf())
	}
	for _, g := range c.pageGaps {
		t.gap(g)
	}
	t.usableItems += c.usableItems
	t.unusableItems += c.unusableItems
	t.facts.FetchedStartURL = t.facts.FetchedStartURL || c.fetchedStart
	t.facts.ListingYielded = t.facts.ListingYielded || c.yielded
	t.cause(c)
}

// cause notes what a failed run's detail names: the first URL that
// failed, or start URL that answered with a gap before any page (a 404);
// each start URL's last result; the first start URL whose listing page
// answered and yielded nothing. Pages that answered and could not be
// used are the markup rule's to tell.
func (t *tally) cause(c *completion) {
	bad := c.class == verdict.ClassFailure || (c.q.Start && c.class == verdict.ClassNeutral && c.gap)
	if bad && t.firstCause.URL == "" {
		t.firstCause = verdict.Gap{URL: shortURL(c.q.URL), Reason: c.reason}
	}
	if c.q.Start {
		t.starts[c.q.URL] = bad
	}
	if c.fetchedStart && !c.yielded && c.class == verdict.ClassOK && t.emptyListing == "" {
		t.emptyListing = shortURL(c.q.URL)
	}
}

// gapOf is the coverage gap a completion leaves: the URL that answered,
// and, after redirects, the queued URL they came from.
func (c *completion) gapOf() verdict.Gap {
	if c.answeredBy == "" {
		return verdict.Gap{URL: c.q.URL, Reason: c.reason}
	}
	return verdict.Gap{URL: c.answeredBy, Reason: fmt.Sprintf("%s (redirected from %s)", c.reason, c.q.URL)}
}

// gap counts a coverage gap and lists the first of them.
func (t *tally) gap(g verdict.Gap) {
	t.unusable++
	if len(t.gapSamples) < verdict.MaxListedGaps {
		t.gapSamples = append(t.gapSamples, g)
	}
}

// requeued forgets the failures of URLs that went back to the queue: an
// outage is not charged as coverage gaps.
func (t *tally) requeued(qs []Queued) {
	for _, q := range qs {
		delete(t.failed, q.URL)
	}
}

// committed adds a batch's item counts and returns the first duplicate key
// of the run, once.
func (t *tally) committed(c Committed) *DuplicateKey {
	first := t.items.FirstDuplicate == nil
	t.items = t.items.Add(c)
	if first {
		return c.FirstDuplicate
	}
	return nil
}

// duplicates counts the items the run did not store because another page
// holds their key, once keys have moved (see fill).
func (t *tally) duplicates() int { return max(t.items.DuplicateKeys-t.items.Moved, 0) }

// productive reports whether the run stored a new item or a change.
func (t *tally) productive() bool { return t.items.New+t.items.Changed > 0 }

// gaps counts the coverage gaps the run leaves: URLs that failed and were
// not fetched successfully since, whether they wait in the failed set or,
// when a stop cut the retry pass short, in the queue; and unusable pages.
func (t *tally) gaps() int { return len(t.failed) + t.unusable }

// fill writes the counts into a result.
func (t *tally) fill(res *Result) {
	res.Requests = t.requests
	// A key that moved is stored after all: the duplicates that proposed
	// the moves are not counted as such.
	res.Items = verdict.ItemCounts{New: t.items.New, Changed: t.items.Changed, Unchanged: t.items.Unchanged,
		Skipped: t.items.Skipped, DuplicateKeys: t.duplicates()}
	res.CoverageGaps = t.gaps()
	res.Gaps = append([]verdict.Gap{}, t.gapSamples...)
	for _, g := range t.failed {
		if len(res.Gaps) >= verdict.MaxListedGaps {
			break
		}
		res.Gaps = append(res.Gaps, g)
	}
	res.Facts = t.facts
	res.Facts.Stop = res.Stop
	res.Facts.Succeeded = t.requests.OK > 0
	res.Facts.FailuresRemain = res.CoverageGaps > 0
	res.Facts.Productive = t.productive()
	res.Facts.FirstCause, res.Facts.EmptyListing = t.firstCause, t.emptyListing
	res.Facts.StartURLs = len(t.starts)
	for _, bad := range t.starts {
		if bad {
			res.Facts.StartURLsFailed++
		}
	}
}
