package extract

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"net/url"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
)

// Listing is what a listing page yields. Each slice is nil when empty.
type Listing struct {
	// ItemLinks are absolute item page URLs, without fragments, de-duplicated
	// in document order. In cards mode links inside cards are left out.
	ItemLinks []string
	// ItemCards holds, when ListingSpec.Card is set, a digest of the card
	// around each item link (its first one), in ItemLinks order; "" for a
	// link outside every card.
	ItemCards []string
	// NextPages are absolute URLs of further listing pages, likewise.
	NextPages []string
	// Items are the usable cards (cards mode only), in document order.
	Items []Item
	// Unusable are the cards that lack required fields (cards mode only).
	Unusable []Unusable
	// Dropped counts the distinct links and the cards past
	// ListingSpec.MaxLinks that the page held but did not yield.
	Dropped int
	// End, for a page that yields no item and no item link, says it shows
	// the end of a pages chain: the ListingSpec.End selector matches it
	// (HTML), or its items (else item_links) expression yields an empty
	// array (JSON). NotEnd says what it shows instead when it could show
	// it and does not; both are empty when it cannot show it (an HTML
	// listing without an End selector).
	End    bool
	NotEnd string
	// Cursor is the JSON text of the cursor a JSON listing names for the
	// next listing request when next_page names a cursor
	// (ListingSpec.NextCursor); "" ends the chain.
	Cursor string
	// Notes say what a listing selector matched but could not use, such
	// as a next_page matching elements without an href, or that it found
	// nothing.
	Notes []Note
}

// Unusable is a listing card, an item page or a row that could not become
// an Item; URL is the URL the item would have had.
type Unusable struct {
	URL string
	Err *UnusableError
	// Report says how reading its fields went, as for a usable item.
	Report FieldReport
}

// Listing reads the links of an HTML listing page and, when the Spec sets
// Listing.Items, the items of each card (one per row with item rows).
// Links resolve against BaseURL(doc, pageURL); relative links that cannot
// be made absolute are skipped. A card's URL is its first usable
// item_links match (the card itself or inside it), else the value of the
// first URL field, else pageURL; item_links inside cards are not
// ItemLinks. Next pages are the href, or the NextPageAttr attribute, of
// the NextPage matches.
func (x *Extractor) Listing(doc *goquery.Document, pageURL *url.URL) Listing {
	var l Listing
	if doc == nil {
		return l
	}
	base := BaseURL(doc, pageURL)
	root := doc.Selection
	if x.scriptItems != nil || x.scriptItemLinks != nil {
		r := newReader(x, base)
		if x.scriptItems != nil {
			x.scriptCards(r, &l, root, pageURL)
		}
		if x.scriptItemLinks != nil {
			x.scriptLinks(r, &l, root, base)
		}
		r.release()
	}
	var cards map[*html.Node]struct{}
	if x.items != nil {
		cards = x.readCards(&l, root, base, pageURL)
		if cards == nil {
			l.note("items", fmt.Sprintf("items %q matches nothing on this page", x.spec.Listing.Items))
		}
	}
	if x.itemLinks != nil {
		set := linkSet{limit: x.spec.Listing.MaxLinks, digests: x.card != nil}
		matched := 0
		for _, n := range root.FindMatcher(x.itemLinks).Nodes {
			if len(cards) > 0 && inCard(n, cards) {
				continue
			}
			matched++
			if link, ok := attrLink(base, n, "href"); ok {
				var digest func() string
				if x.card != nil {
					digest = func() string { return x.cardDigest(n) }
				}
				set.add(link, digest)
			}
		}
		l.ItemLinks, l.ItemCards = set.list, set.cards
		l.Dropped += set.dropped
		l.noteUnusable("item_links", x.spec.Listing.ItemLinks, "href", matched, len(set.list)+set.dropped)
	}
	if x.nextPage != nil {
		set := linkSet{limit: x.spec.Listing.MaxLinks}
		nodes := root.FindMatcher(x.nextPage).Nodes
		for _, n := range nodes {
			if link, ok := attrLink(base, n, x.nextAttr); ok {
				set.add(link, nil)
			}
		}
		l.NextPages = set.list
		l.Dropped += set.dropped
		l.noteUnusable("next_page", x.spec.Listing.NextPage, x.nextAttr, len(nodes), len(set.list)+set.dropped)
	}
	x.htmlEnding(root, &l)
	return l
}

// Note says, for one page, what a listing selector matched but could not
// use, or that it found nothing.
type Note struct {
	// Key is the listing key of the selector: "item_links", "next_page"
	// or "items".
	Key string
	// Text says it in words, naming the selector.
	Text string
}

func (l *Listing) note(key, text string) { l.Notes = append(l.Notes, Note{Key: key, Text: text}) }

// noteUnusable notes a listing selector that matched elements but took no
// link from any of them: they lack a usable attribute.
func (l *Listing) noteUnusable(key, sel, attr string, matched, links int) {
	if matched > 0 && links == 0 {
		l.note(key, fmt.Sprintf("%s %q matches elements without a usable %q", key, sel, attr))
	}
}

// readCards fills l.Items and l.Unusable and returns the set of card nodes.
func (x *Extractor) readCards(l *Listing, root *goquery.Selection, base, pageURL *url.URL) map[*html.Node]struct{} {
	found := root.FindMatcher(x.items)
	if len(found.Nodes) == 0 {
		return nil
	}
	pageStr := urlString(pageURL)
	cards := make(map[*html.Node]struct{}, len(found.Nodes))
	r := newReader(x, base)
	defer r.release()
	b := batch{items: l.Items, unusable: l.Unusable}
	for i, n := range found.Nodes {
		cards[n] = struct{}{}
		if limit := x.spec.Listing.MaxLinks; limit > 0 && i >= limit {
			l.Dropped++ // still a card: its links are not item links
			continue
		}
		card := found.Eq(i)
		cardURL, linked := x.cardLink(card, base)
		if !linked {
			cardURL = pageStr
		}
		r.htmlItems(&b, card, cardURL, !linked)
	}
	l.Items, l.Unusable = b.items, b.unusable
	return cards
}

// cardLink returns the first usable item link of a card, without its
// volatile parameters.
func (x *Extractor) cardLink(card *goquery.Selection, base *url.URL) (string, bool) {
	link, ok := x.firstCardLink(card, base)
	return x.params.StripString(link), ok
}

// firstCardLink returns the first usable item link of a card.
func (x *Extractor) firstCardLink(card *goquery.Selection, base *url.URL) (string, bool) {
	if x.itemLinks == nil {
		return "", false
	}
	if n := card.Nodes[0]; x.itemLinks.Match(n) {
		if link, ok := attrLink(base, n, "href"); ok {
			return link, true
		}
	}
	if first := card.FindMatcher(x.firstLink).Nodes; len(first) > 0 {
		if link, ok := attrLink(base, first[0], "href"); ok {
			return link, true
		}
	}
	for _, n := range card.FindMatcher(x.itemLinks).Nodes {
		if link, ok := attrLink(base, n, "href"); ok {
			return link, true
		}
	}
	return "", false
}

// inCard reports whether n is a card or inside one.
func inCard(n *html.Node, cards map[*html.Node]struct{}) bool {
	for ; n != nil; n = n.Parent {
		if _, ok := cards[n]; ok {
			return true
		}
	}
	return false
}

// attrLink returns n's attribute attr (href) as an absolute link (see
// linkURL).
func attrLink(base *url.URL, n *html.Node, attr string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == attr && a.Namespace == "" {
			return linkURL(base, a.Val)
		}
	}
	return "", false
}

// linkSet keeps links unique in insertion order, switching from a linear
// scan to a map once it grows. Beyond limit (when positive) it counts the
// distinct links it drops.
type linkSet struct {
	list    []string
	seen    map[string]struct{}
	limit   int
	dropped int
	// digests keeps cards, a digest per link in list (see Listing.ItemCards).
	digests bool
	cards   []string
}

// add adds link unless the set has it; digest, called only for a link
// that is added, gives its card's digest.
func (s *linkSet) add(link string, digest func() string) {
	if s.seen == nil {
		for _, l := range s.list {
			if l == link {
				return
			}
		}
		if len(s.list) < 32 && (s.limit <= 0 || len(s.list) < s.limit) {
			s.append(link, digest)
			return
		}
		s.seen = make(map[string]struct{}, 2*len(s.list))
		for _, l := range s.list {
			s.seen[l] = struct{}{}
		}
	}
	if _, dup := s.seen[link]; dup {
		return
	}
	s.seen[link] = struct{}{}
	if s.limit > 0 && len(s.list) >= s.limit {
		s.dropped++
		return
	}
	s.append(link, digest)
}

func (s *linkSet) append(link string, digest func() string) {
	s.list = append(s.list, link)
	if s.digests {
		d := ""
		if digest != nil {
			d = digest()
		}
		s.cards = append(s.cards, d)
	}
}

// cardDigest is a digest of the HTML of the card around an item link node:
// the node itself or its closest ancestor that matches the card selector;
// "" when none does.
func (x *Extractor) cardDigest(n *html.Node) string {
	for c := n; c != nil; c = c.Parent {
		if c.Type == html.ElementNode && x.card.Match(c) {
			h := fnv.New128a()
			if err := html.Render(h, c); err != nil {
				return ""
			}
			return hex.EncodeToString(h.Sum(nil))
		}
	}
	return ""
}

// empty reports whether the page yielded no item, card and item link.
func (l *Listing) empty() bool { return len(l.Items)+len(l.Unusable)+len(l.ItemLinks) == 0 }

// htmlEnding says whether an HTML listing page that yields nothing matches
// the End selector.
func (x *Extractor) htmlEnding(root *goquery.Selection, l *Listing) {
	if x.end == nil || !l.empty() {
		return
	}
	if l.End = len(root.FindMatcher(x.end).Nodes) > 0; !l.End {
		l.NotEnd = fmt.Sprintf("end %q matches nothing on it", x.spec.Listing.End)
	}
}
