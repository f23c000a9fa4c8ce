package crawl

import (
	"fmt"
	"log/slog"

	"github.com/databrew/databrew-stage/extract"
	"github.com/databrew/databrew-stage/verdict"
)

// notices collects what a run tells its operator once, at its end, rather
// than per page: a listing selector that yielded nothing on any listing
// page the run read (a next_page matching elements without an href), and
// a field that found nothing on any item. A note on one page is no news —
// the last page's next link has no href on many sites — but a selector
// that never yields is how a renamed class shows up before it costs a
// column or a whole catalog.
type notices struct {
	// notes holds the first note of each listing key, in order, and the
	// page it came from; yielded the keys some listing page got a result
	// from.
	notes   []pageNote
	noted   map[string]bool
	yielded map[string]bool
	// items counts the items read (usable or not); missed counts, per
	// field, the items in which it found nothing, and why holds the first
	// reason; typeErrs counts the items in which it found a value its type
	// does not take, and bad and badURL hold the first such value and the
	// item it came from.
	items       int
	missed      []int
	why         []string
	typeErrs    []int
	bad, badURL []string
}

type pageNote struct {
	extract.Note
	page string
}

func newNotices(fields int) *notices {
	return &notices{noted: map[string]bool{}, yielded: map[string]bool{}, missed: make([]int, fields), why: make([]string, fields),
		typeErrs: make([]int, fields), bad: make([]string, fields), badURL: make([]string, fields)}
}

// page takes a completion's notes and what its listing page yielded, and
// counts its items' fields.
func (n *notices) page(c *completion) {
	if c.q.Kind == KindListing {
		for _, note := range c.notes {
			if !n.noted[note.Key] {
				n.noted[note.Key] = true
				n.notes = append(n.notes, pageNote{Note: note, page: shortURL(c.q.URL)})
			}
		}
		for _, l := range c.links {
			switch l.Kind {
			case KindItem:
				n.yielded["item_links"] = true
			case KindListing:
				n.yielded["next_page"] = true
			}
		}
		if c.usableItems+c.unusableItems > 0 {
			n.yielded["items"] = true
		}
	}
	if c.notModified {
		return // replayed, not read
	}
	n.items += c.usableItems + c.unusableItems
	for _, rep := range c.reports {
		for i := range n.missed {
			switch {
			case rep.TypeError(i):
				if n.typeErrs[i]++; n.bad[i] == "" {
					n.bad[i], n.badURL[i] = rep.Bad[i], rep.URL
				}
			case rep.FoundNothing(i):
				if n.missed[i]++; n.why[i] == "" {
					n.why[i] = rep.Why[i]
				}
			}
		}
	}
}

// yieldedWhat names what a listing key yields, for the warning.
var yieldedWhat = map[string]string{"item_links": "an item link", "next_page": "a next page", "items": "an item"}

// report warns once per listing selector that yielded nothing on any
// listing page the run read though it was noted, and once per field that
// found nothing on any item the run read.
func (n *notices) report(log *slog.Logger, fields, types []string) {
	for _, note := range n.notes {
		if !n.yielded[note.Key] {
			log.Warn(fmt.Sprintf("%s: no listing page of this run yielded %s from it", note.Text, yieldedWhat[note.Key]),
				"key", "listing."+note.Key, "page", note.page)
		}
	}
	for i, name := range fields {
		if i < len(n.typeErrs) && n.typeErrs[i] > 0 {
			log.Warn(fmt.Sprintf("field %s: %d values are not %s, e.g. %q (%s)", name, n.typeErrs[i], types[i], n.bad[i], n.badURL[i]),
				"field", name, "type_errors", n.typeErrs[i])
		}
	}
	if n.items == 0 {
		return
	}
	for i, name := range fields {
		if i < len(n.missed) && n.missed[i] == n.items {
			log.Warn(fmt.Sprintf("field %q found nothing on any of the %d items read: %s", name, n.items, n.why[i]),
				"field", name, "items", n.items)
		}
	}
}

// fill writes the per-field counts into a result.
func (n *notices) fill(res *Result, fields []string) {
	res.Fields = make(map[string]verdict.FieldCounts, len(fields))
	for i, name := range fields {
		if i < len(n.missed) {
			res.Fields[name] = verdict.FieldCounts{TypeErrors: n.typeErrs[i], FoundNothing: n.missed[i]}
			res.Items.TypeErrors += n.typeErrs[i]
		}
	}
}
