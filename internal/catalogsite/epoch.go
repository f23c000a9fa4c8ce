package catalogsite

import "math/rand/v2"

// StepCounts says what one catalog step changed.
type StepCounts struct {
	// Removed items leave the listings and their pages answer
	// Options.GoneStatus.
	Removed int
	// Repriced items show their new price on their listing card and page.
	Repriced int
	// Restocked items changed only on their item page: the card does not
	// show the stock.
	Restocked int
	// Added items are new, at the end of the listings.
	Added int
}

// Step moves the catalog to its next version, as a real catalog changes
// between two nightly crawls: about 1% of the visible items are removed,
// 2% repriced (a change the listing cards show), 1% restocked (a change
// only the item pages show), and 1% new items are added. Which items
// change follows from seed. It returns what it changed.
func (s *Site) Step(seed uint64) StepCounts {
	s.mu.RLock()
	visible := make([]int, len(s.visible))
	for i, idx := range s.visible {
		visible[i] = int(idx) + 1
	}
	s.mu.RUnlock()
	rng := rand.New(rand.NewPCG(seed, uint64(s.opts.Seed)))
	rng.Shuffle(len(visible), func(i, j int) { visible[i], visible[j] = visible[j], visible[i] })
	n := len(visible)
	part := func(per10k int) int { return max(n*per10k/10000, 1) }
	var c StepCounts
	take := func(k int) []int {
		k = min(k, len(visible))
		ids := visible[:k]
		visible = visible[k:]
		return ids
	}
	for _, id := range take(part(100)) {
		if s.Remove(id) {
			c.Removed++
		}
	}
	for _, id := range take(part(200)) {
		it, _ := s.Item(id)
		if s.SetPrice(id, it.Price+float64(1+rng.IntN(900))/100) {
			c.Repriced++
		}
	}
	for _, id := range take(part(100)) {
		it, _ := s.Item(id)
		if s.SetStock(id, it.Stock+1+rng.IntN(20)) {
			c.Restocked++
		}
	}
	c.Added = len(s.Add(part(100)))
	return c
}
