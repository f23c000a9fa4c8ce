package verdict

import "fmt"

// Outcome says how a run went.
type Outcome string

// The three outcomes.
const (
	OutcomeSuccess Outcome = "success"
	OutcomePartial Outcome = "partial"
	OutcomeFailed  Outcome = "failed"
)

// Valid reports whether o is one of the three outcomes.
func (o Outcome) Valid() bool {
	return o == OutcomeSuccess || o == OutcomePartial || o == OutcomeFailed
}

// MarshalText encodes o, refusing values outside the three outcomes.
func (o Outcome) MarshalText() ([]byte, error) {
	if !o.Valid() {
		return nil, fmt.Errorf("unknown outcome %q", string(o))
	}
	return []byte(o), nil
}

// UnmarshalText decodes o, refusing values outside the three outcomes.
func (o *Outcome) UnmarshalText(b []byte) error {
	v := Outcome(b)
	if !v.Valid() {
		return fmt.Errorf("unknown outcome %q", string(b))
	}
	*o = v
	return nil
}

// Facts are what the outcome rules read about a finished run.
type Facts struct {
	// Stop is why the run ended.
	Stop Stop
	// Succeeded is true when at least one request came back ok.
	Succeeded bool
	// FailuresRemain is true when a failure or a coverage gap remains at
	// the end of the run.
	FailuresRemain bool
	// FetchedStartURL is true when the run fetched a start URL.
	FetchedStartURL bool
	// ListingYielded is true when some listing page yielded an item or an
	// item link.
	ListingYielded bool
	// Productive is true when the run stored a new item or a change.
	Productive bool

	// What a failed run's detail names (see FailedDetail); the rules do
	// not read them.

	// FirstCause is the run's first URL that failed, or start URL that
	// answered with a coverage gap before any page (a 404), with its
	// reason; empty when there was none.
	FirstCause Gap
	// EmptyListing is the first start URL whose listing page answered
	// but yielded no item and no item link.
	EmptyListing string
	// StartURLs counts the start URLs the run finished; StartURLsFailed
	// those whose last result failed or was a gap before any page.
	StartURLs, StartURLsFailed int
}

// Rule numbers the outcome rule that matched, 1 to 4, in the
// documentation's order.
type Rule int

// Decide applies the four ordered outcome rules and returns the outcome and
// the rule that set it:
//
//  1. failed when no request succeeded while a failure or a coverage gap
//     remains, or when the run fetched a start URL and no listing page
//     yielded an item or an item link.
//  2. success when the run stopped on queue_empty or max_requests.
//  3. partial when the run was productive, or was interrupted after a
//     request succeeded.
//  4. failed otherwise.
func Decide(f Facts) (Outcome, Rule) {
	switch {
	case !f.Succeeded && f.FailuresRemain,
		f.FetchedStartURL && !f.ListingYielded:
		return OutcomeFailed, 1
	case f.Stop == StopQueueEmpty || f.Stop == StopMaxRequests:
		return OutcomeSuccess, 2
	case f.Productive || (f.Stop == StopInterrupted && f.Succeeded):
		return OutcomePartial, 3
	default:
		return OutcomeFailed, 4
	}
}
