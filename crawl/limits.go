package crawl

import "fmt"

// Lengths past which a URL or an item key is not kept: the state file
// cannot hold keys over 32 KiB, and no real catalog needs more than a few
// hundred bytes. A link or key over its limit is a coverage gap, never a
// run failure.
const (
	// MaxURLBytes bounds a URL the crawl queues, after normalisation.
	MaxURLBytes = 8 << 10
	// MaxKeyBytes bounds an item's key (its key field's text, or its URL).
	MaxKeyBytes = 8 << 10
)

// shownURLBytes bounds a URL as a coverage gap lists it.
const shownURLBytes = 256

// tooLong is a coverage gap's reason for a value over its limit.
func tooLong(what string, n, limit int) string {
	return fmt.Sprintf("%s of %d bytes is longer than %d", what, n, limit)
}

// shortURL cuts a URL to what a report lists of it.
func shortURL(u string) string {
	if len(u) <= shownURLBytes {
		return u
	}
	return u[:shownURLBytes] + "…"
}
