package crawl

import "fmt"

// judgeSitemap keeps what a sitemap listed for the next traversal, and
// makes a sitemap that lists nothing, after it listed URLs in the last
// traversal, a coverage gap once: a sitemap generator caught rebuilding
// answers an empty <urlset> while the items are all there. The next
// traversal that finds it empty again takes it as empty. listed counts the
// URLs it named, in scope or not.
func (r *run) judgeSitemap(memo *PageMemo, listed int, c *completion) {
	c.chain = &ChainMark{Held: listed}
	if listed == 0 && memo != nil && memo.Chain != nil && memo.Chain.Held > 0 {
		c.gap, c.reason = true, fmt.Sprintf("sitemap lists no URL; it listed %d in the last traversal", memo.Chain.Held)
	}
}
