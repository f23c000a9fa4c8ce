package crawl

import (
	"fmt"
	"log/slog"

	"github.com/databrew/databrew-stage/extract"
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
	// items counts the usable items read; missed counts, per field, the
	// items on which it found nothing, and why holds the first reason.
	items  int
	missed []int
	why    []string
}

type pageNote struct {
	extract.Note
	page string
}

func newNotices(fields int) *notices {
	return &notices{noted: map[string]bool{}, yielded: map[string]bool{}, missed: make([]int, fields), why: make([]string, fields)}
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
	for _, it := range c.items {
		n.items++
		for i, why := range it.Why {
			if why == "" || i >= len(n.missed) {
				continue
			}
			n.missed[i]++
			if n.why[i] == "" {
				n.why[i] = why
			}
		}
	}
}

// yieldedWhat names what a listing key yields, for the warning.
var yieldedWhat = map[string]string{"item_links": "an item link", "next_page": "a next page", "items": "an item"}

// report warns once per listing selector that yielded nothing on any
// listing page the run read though it was noted, and once per field that
// found nothing on any item the run read.
func (n *notices) report(log *slog.Logger, fields []string) {
	for _, note := range n.notes {
		if !n.yielded[note.Key] {
			log.Warn(fmt.Sprintf("%s: no listing page of this run yielded %s from it", note.Text, yieldedWhat[note.Key]),
				"key", "listing."+note.Key, "page", note.page)
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
