package verdict

import (
	"fmt"
	"math"
	"strconv"
)

// Thresholds configure the two stop rules.
type Thresholds struct {
	// MaxConsecutiveFailures trips consecutive_failures when that many
	// results in a row are failures. 0 disables the rule.
	MaxConsecutiveFailures int
	// MaxErrorRate trips error_rate when the failure share of the window
	// reaches it. 0 disables the rule.
	MaxErrorRate float64
	// ErrorWindow is the number of last counted results the share is over.
	ErrorWindow int
	// ErrorMinSamples is how many results the window must hold before the
	// share is judged.
	ErrorMinSamples int
	// MaxUnusableRate trips error_rate when the share of unusable items
	// (item pages, cards, rows) among the last ErrorWindow item results
	// reaches it, judged from ErrorMinSamples on: the markup may have
	// changed. 0 disables the rule.
	MaxUnusableRate float64
}

// DefaultThresholds are the values the practitioners converged on: 25 in a
// row, 35 % of the last 200, judged from 50 samples.
func DefaultThresholds() Thresholds {
	return Thresholds{MaxConsecutiveFailures: 25, MaxErrorRate: 0.35, ErrorWindow: 200, ErrorMinSamples: 50}
}

// Trip describes a stop rule that fired.
type Trip struct {
	// Stop is StopConsecutiveFailures or StopErrorRate.
	Stop Stop
	// Failed and Of are the failures and counted results behind the trip:
	// the run of failures for consecutive_failures, the window for
	// error_rate.
	Failed, Of int
	// Detail says it in plain words for the report.
	Detail string
	// Markup is true when unusable items, not failed requests, tripped
	// the rule: the site answers, but its markup may have changed.
	Markup bool
}

// StopRules counts URL results after their retries and says when a stop
// rule trips. ok resets the consecutive counter; neutral results neither
// count toward nor reset either rule.
type StopRules struct {
	t           Thresholds
	consecutive int
	window      *ErrorWindow
	// unusable holds the last item results, true for an unusable item.
	unusable *ErrorWindow
}

// NewStopRules returns rules with empty counters.
func NewStopRules(t Thresholds) *StopRules {
	return &StopRules{t: t, window: NewErrorWindow(t.ErrorWindow), unusable: NewErrorWindow(t.ErrorWindow)}
}

// RecordItems counts the items a page held — usable and unusable (item
// pages, cards, rows) — and returns the trip it caused: error_rate when
// the share of unusable items in the window reaches MaxUnusableRate. A
// site whose redesign breaks every selector never ends success with no
// rows.
func (r *StopRules) RecordItems(usable, unusable int) (Trip, bool) {
	for range usable {
		r.unusable.Add(false)
	}
	for range unusable {
		r.unusable.Add(true)
	}
	if r.t.MaxUnusableRate <= 0 || unusable == 0 || !r.unusable.Exceeds(r.t.MaxUnusableRate, r.t.ErrorMinSamples) {
		return Trip{}, false
	}
	bad, of := r.unusable.Counts()
	return Trip{Stop: StopErrorRate, Failed: bad, Of: of, Markup: true, Detail: UnusableRateDetail(bad, of, r.t.MaxUnusableRate)}, true
}

// Record counts one result and returns the trip it caused, if any. When
// both rules fire on the same result, consecutive_failures is reported: it
// is the more specific of the two.
func (r *StopRules) Record(c Class) (Trip, bool) {
	switch c {
	case ClassOK:
		r.consecutive = 0
		r.window.Add(false)
		return Trip{}, false
	case ClassFailure:
		r.consecutive++
		r.window.Add(true)
	default:
		return Trip{}, false
	}
	if n := r.t.MaxConsecutiveFailures; n > 0 && r.consecutive >= n {
		return Trip{
			Stop: StopConsecutiveFailures, Failed: r.consecutive, Of: r.consecutive,
			Detail: ConsecutiveDetail(r.consecutive),
		}, true
	}
	if r.t.MaxErrorRate > 0 && r.window.Exceeds(r.t.MaxErrorRate, r.t.ErrorMinSamples) {
		failed, of := r.window.Counts()
		return Trip{
			Stop: StopErrorRate, Failed: failed, Of: of,
			Detail: ErrorRateDetail(failed, of, r.t.MaxErrorRate),
		}, true
	}
	return Trip{}, false
}

// Window returns the failures and results the error window holds.
func (r *StopRules) Window() (failed, of int) { return r.window.Counts() }

// Consecutive returns the current run of failures.
func (r *StopRules) Consecutive() int { return r.consecutive }

// Reset starts the rules afresh, as when a breaker closes.
func (r *StopRules) Reset() {
	r.consecutive = 0
	r.window.Reset()
	r.unusable.Reset()
}

// ConsecutiveDetail is the report detail for consecutive_failures.
func ConsecutiveDetail(n int) string {
	return fmt.Sprintf("%d requests in a row failed after retries", n)
}

// ErrorRateDetail is the report detail for error_rate, such as
// "41% of the last 200 requests failed (threshold 35%)".
func ErrorRateDetail(failed, of int, threshold float64) string {
	return fmt.Sprintf("%s of the last %d requests failed (threshold %s)",
		Percent(float64(failed)/float64(of)), of, Percent(threshold))
}

// UnusableRateDetail is the report detail for error_rate tripped by
// unusable items, such as "62% of the last 200 item pages were unusable
// (threshold 50%): the markup may have changed".
func UnusableRateDetail(unusable, of int, threshold float64) string {
	return fmt.Sprintf("%s of the last %d item pages were unusable (threshold %s): the markup may have changed",
		Percent(float64(unusable)/float64(of)), of, Percent(threshold))
}

// AllUnusableDetail is the report detail for error_rate at the end of a
// run whose every item was unusable, however few.
func AllUnusableDetail(n int) string {
	return fmt.Sprintf("every item page the run read (%d) was unusable: the markup may have changed", n)
}

// MaxRequestsDetail is the report detail for max_requests.
func MaxRequestsDetail(limit int) string {
	return fmt.Sprintf("Reached max requests limit (%d)", limit)
}

// DetailNotStarted is the detail of a config that a deadline or a signal
// stopped before it started.
const DetailNotStarted = "Not started"

// Percent formats a share as a whole percentage, or with one decimal when
// rounding to a whole number would hide the difference from a threshold.
func Percent(share float64) string {
	p := share * 100
	if whole := math.Round(p); math.Abs(whole-p) < 0.05 {
		return strconv.FormatFloat(whole, 'f', 0, 64) + "%"
	}
	return strconv.FormatFloat(math.Round(p*10)/10, 'f', 1, 64) + "%"
}
