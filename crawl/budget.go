package crawl

import "sync/atomic"

// budget is the run's request budget: every HTTP exchange for a page takes
// one token. A zero limit means no budget.
type budget struct {
	limit int64
	used  atomic.Int64
}

func (b *budget) take() bool {
	if b.limit <= 0 {
		b.used.Add(1)
		return true
	}
	for {
		n := b.used.Load()
		if n >= b.limit {
			return false
		}
		if b.used.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (b *budget) exhausted() bool { return b.limit > 0 && b.used.Load() >= b.limit }

// charge takes n more tokens for exchanges already made (the frames a
// rendered page loaded), past the limit if need be: the next take fails.
func (b *budget) charge(n int) {
	if n > 0 {
		b.used.Add(int64(n))
	}
}
