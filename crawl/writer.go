package crawl

// writer commits batches to the store on its own goroutine, so the engine
// keeps dispatching while a transaction syncs. One batch is in flight at a
// time; batches are committed in the order they were sent.
type writer struct {
	store Store
	in    chan *Batch
	out   chan committed
	busy  bool
}

type committed struct {
	batch  *Batch
	counts Committed
	err    error
}

func newWriter(store Store) *writer {
	w := &writer{store: store, in: make(chan *Batch), out: make(chan committed, 1)}
	go w.loop()
	return w
}

func (w *writer) loop() {
	defer close(w.out)
	for b := range w.in {
		counts, err := w.store.Commit(b)
		w.out <- committed{batch: b, counts: counts, err: err}
	}
}

// send hands a batch to the writer; the caller must not be waiting on an
// earlier one.
func (w *writer) send(b *Batch) {
	w.busy = true
	w.in <- b
}

// wait blocks until the batch in flight is committed.
func (w *writer) wait() committed {
	res := <-w.out
	w.busy = false
	return res
}

// close stops the writer once it is idle.
func (w *writer) close() {
	close(w.in)
	for range w.out {
	}
}
