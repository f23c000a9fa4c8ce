package fetch

import "time"

// deadline is a request's timeout: it calls expire once the request has
// run for its time, not counting the time it was paused (while its body
// waited for the body budget, which says nothing about the site).
type deadline struct {
	timer *time.Timer
	left  time.Duration
	since time.Time
}

// startDeadline starts a deadline of d.
func startDeadline(d time.Duration, expire func()) *deadline {
	return &deadline{timer: time.AfterFunc(d, expire), left: d, since: time.Now()}
}

// pause stops the clock; false when the time has already run out.
func (d *deadline) pause() bool {
	if !d.timer.Stop() {
		return false
	}
	d.left -= time.Since(d.since)
	return true
}

// resume starts the clock again after pause.
func (d *deadline) resume() {
	d.since = time.Now()
	d.timer.Reset(max(d.left, 0))
}

// stop stops the clock for good.
func (d *deadline) stop() { d.timer.Stop() }
