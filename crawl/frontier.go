package crawl

// frontier is the in-memory head of the queue: entries read from the store
// and newly discovered entries the engine can dispatch before their batch
// commits. It is bounded; what does not fit waits in the store.
type frontier struct {
	buf   []Queued // ring buffer
	head  int
	n     int
	limit int // entries pushBack accepts without force
}

func newFrontier(limit int) *frontier { return &frontier{buf: make([]Queued, limit), limit: limit} }

func (f *frontier) len() int { return f.n }

// full reports whether the ring has no free slot.
func (f *frontier) full() bool { return f.n == len(f.buf) }

func (f *frontier) grow() {
	nb := make([]Queued, 2*len(f.buf))
	for i := 0; i < f.n; i++ {
		nb[i] = f.buf[(f.head+i)%len(f.buf)]
	}
	f.buf, f.head = nb, 0
}

// pushBack appends q. Beyond the limit it refuses q unless force is set:
// forced entries (listing pages, read-back entries) may exceed the limit,
// but item pages never fill the room they leave.
func (f *frontier) pushBack(q Queued, force bool) bool {
	if !force && f.n >= f.limit {
		return false
	}
	if f.full() {
		f.grow()
	}
	f.buf[(f.head+f.n)%len(f.buf)] = q
	f.n++
	return true
}

// pushFront puts q first, growing the ring if needed: listing pages go
// first so discovery runs ahead of item fetching.
func (f *frontier) pushFront(q Queued) {
	if f.full() {
		f.grow()
	}
	f.head = (f.head - 1 + len(f.buf)) % len(f.buf)
	f.buf[f.head] = q
	f.n++
}

func (f *frontier) popFront() (Queued, bool) {
	if f.n == 0 {
		return Queued{}, false
	}
	q := f.buf[f.head]
	f.buf[f.head] = Queued{}
	f.head = (f.head + 1) % len(f.buf)
	f.n--
	return q, true
}
