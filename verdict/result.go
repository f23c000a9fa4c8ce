package verdict

// Class is what a URL's fetch came to after its retries.
type Class uint8

// The three result classes.
const (
	// ClassOK is a usable page, or a 304.
	ClassOK Class = iota + 1
	// ClassNeutral is the site's answer about that one URL: 404, 410, other
	// non-blocking 4xx, an over-size body, a page extraction cannot use.
	// Neutral results neither count toward nor reset either stop rule.
	ClassNeutral
	// ClassFailure is 5xx, 408, 429, 403, a timeout, a refused or reset
	// connection, a truncated body, or a 2xx body shorter than
	// min_body_bytes.
	ClassFailure
)

// String names the class as reports and logs spell it.
func (c Class) String() string {
	switch c {
	case ClassOK:
		return "ok"
	case ClassNeutral:
		return "neutral"
	case ClassFailure:
		return "failure"
	default:
		return "unknown"
	}
}
