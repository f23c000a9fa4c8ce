package catalogsite

import (
	"strconv"
	"strings"
)

// Item is one product of the catalog. Values returned by the Site are
// copies; changing them does not change the site.
type Item struct {
	// ID is the item's number, from 1; its page is /catalogue/item-ID.html.
	ID int
	// Title is shown in the page's h1 and the listing card.
	Title string
	// Price is rendered with two decimals (see PriceString).
	Price float64
	// Stock is rendered as "In stock (N available)".
	Stock int
	// UPC is a 16-hex-digit code unique per item, the natural key.
	UPC string
	// Tags are rendered as ul.tags list entries.
	Tags []string
	// Image is the relative image URL, "../media/ID.jpg".
	Image string
	// Removed items are off the listings and their pages answer
	// Options.GoneStatus.
	Removed bool
}

// PriceString returns the item's price exactly as the pages render it,
// with two decimals and without the currency sign.
func (it Item) PriceString() string { return PriceText(it.Price) }

// PriceText formats a price the way the pages render it: two decimals,
// no currency sign (12.5 becomes "12.50").
func PriceText(p float64) string { return strconv.FormatFloat(p, 'f', 2, 64) }

// record is a stored item with the HTML fragments its pages repeat, kept
// up to date by refresh.
type record struct {
	Item
	titleHTML string // Title escaped for HTML
	priceHTML string // "£" and PriceText(Price)
}

func newRecord(it Item) record {
	r := record{Item: it}
	r.refresh()
	return r
}

// refresh recomputes the fragments after the item changed.
func (r *record) refresh() {
	if needsEscape(r.Title) {
		r.titleHTML = string(appendEscaped(nil, r.Title))
	} else {
		r.titleHTML = r.Title
	}
	r.priceHTML = "£" + PriceText(r.Price)
}

// clone returns a copy of it that shares no memory with it.
func (it Item) clone() Item {
	it.Tags = append([]string(nil), it.Tags...)
	return it
}

var titleWords = []string{
	"Silent", "River", "Glass", "Harbor", "Copper", "Winter", "Garden", "Echo",
	"Lantern", "Orchard", "Paper", "Stone", "Velvet", "Atlas", "Meadow", "Signal",
	"Amber", "Falcon", "Quiet", "Ember", "Hollow", "Tide", "Marble", "Cinder",
}

// accentedWords are used in every seventh title so that charset handling
// is exercised; all of them are representable in ISO-8859-1.
var accentedWords = []string{"Élan", "Ünïcode", "Café", "Naïve", "Façade", "Señor"}

var tagWords = []string{
	"fiction", "poetry", "history", "science", "travel",
	"mystery", "classics", "fantasy", "humor", "art",
}

// mix is the splitmix64 finaliser, a bijection on uint64.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// makeItem derives item id's initial values from the seed alone, so an
// item's data does not depend on when or how it was created.
func makeItem(seed int64, id int) Item {
	seedKey := mix(uint64(seed) ^ 0x5bd1e9955bd1e995)
	r := mix(uint64(id)*0x9e3779b97f4a7c15 ^ seedKey)
	next := func() uint64 {
		r = mix(r + 0x9e3779b97f4a7c15)
		return r
	}

	var title strings.Builder
	title.WriteString("Book ")
	title.WriteString(strconv.Itoa(id))
	title.WriteString(": ")
	if id%7 == 0 {
		title.WriteString(accentedWords[next()%uint64(len(accentedWords))])
	} else {
		title.WriteString(titleWords[next()%uint64(len(titleWords))])
	}
	title.WriteByte(' ')
	title.WriteString(titleWords[next()%uint64(len(titleWords))])

	cents := 500 + next()%5500
	stock := int(next() % 31)

	ntags := 1 + int(next()%3)
	tags := make([]string, 0, ntags)
	for len(tags) < ntags {
		if t := tagWords[next()%uint64(len(tagWords))]; !contains(tags, t) {
			tags = append(tags, t)
		}
	}

	// Adding a constant and applying a bijection keeps UPCs unique per ID.
	var upc [16]byte
	for i, v := 15, mix(uint64(id)+seedKey); i >= 0; i, v = i-1, v>>4 {
		upc[i] = "0123456789abcdef"[v&15]
	}

	return Item{
		ID:    id,
		Title: title.String(),
		Price: float64(cents) / 100,
		Stock: stock,
		UPC:   string(upc[:]),
		Tags:  tags,
		Image: "../media/" + strconv.Itoa(id) + ".jpg",
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
