package crawl

import (
	"fmt"
	"log/slog"
)

// notices collects what a run should tell its operator once rather than
// per page: the notes readers give (a selector matching elements it cannot
// use) and the fields that found nothing on any item the run read, which
// is how a renamed class shows up before it costs a column.
type notices struct {
	noted map[string]bool
	// items counts the usable items read; missed counts, per field, the
	// items on which it found nothing, and why holds the first reason.
	items  int
	missed []int
	why    []string
}

func newNotices(fields int) *notices {
	return &notices{noted: map[string]bool{}, missed: make([]int, fields), why: make([]string, fields)}
}

// page takes a completion's notes, warning about each the first time, and
// counts its items' fields.
func (n *notices) page(log *slog.Logger, c *completion) {
	for _, note := range c.notes {
		if !n.noted[note] {
			n.noted[note] = true
			log.Warn(note, "page", shortURL(c.q.URL))
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

// report warns, once per field, about each field that found nothing on
// every item the run read.
func (n *notices) report(log *slog.Logger, fields []string) {
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
