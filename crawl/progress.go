package crawl

// Progress is a snapshot of a running crawl, reported a few times a second
// to Deps.Progress.
type Progress struct {
	Requests int
	OK       int
	Failed   int
	New      int
	Changed  int
	// Queued is how many entries wait in memory ahead of dispatch; more
	// may wait in the store.
	Queued int
}

func (r *run) progress() {
	if r.e.d.Progress == nil {
		return
	}
	q, items := &r.tally.requests, &r.tally.items
	r.e.d.Progress(Progress{
		Requests: q.Total, OK: q.OK, Failed: q.Failed,
		New: items.New, Changed: items.Changed, Queued: r.sched.queued(),
	})
}
