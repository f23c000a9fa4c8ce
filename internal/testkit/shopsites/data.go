package shopsites

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// mix is the splitmix64 finaliser, a bijection on uint64.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// rng is a deterministic number stream derived from a product number and
// a salt, so a product's data never depends on the order it is built in.
type rng uint64

func newRNG(id int, salt uint64) *rng {
	r := rng(mix(uint64(id)*0x9e3779b97f4a7c15 ^ salt))
	return &r
}

func (r *rng) next() uint64 {
	*r = rng(mix(uint64(*r) + 0x9e3779b97f4a7c15))
	return uint64(*r)
}

// intn returns a number in [0, n).
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// between returns a number in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

func pick[T any](r *rng, list []T) T { return list[r.intn(len(list))] }

var (
	adjectives = []string{
		"Nordic", "Velvet", "Copper", "Amber", "Harbor", "Linen", "Cedar",
		"Slate", "Ember", "Meadow", "Quiet", "Falcon", "Marble", "Tide",
	}
	// accented adjectives are used in every fifth name, so decoding of
	// escapes and entities is exercised.
	accented = []string{"Café", "Crème", "Élan", "Brûlée", "Façade", "Señor", "Naïve"}
	nouns    = []string{
		"Lamp", "Kettle", "Mug", "Blanket", "Chair", "Vase", "Teapot",
		"Candle", "Bowl", "Stool", "Clock", "Basket",
	}
	brands   = []string{"Kessler & Voss", "Maison Élise", "Nordlicht", "Oak & Iron", "Brightwell"}
	tagWords = []string{"kitchen", "living", "gift", "outdoor", "sale", "new"}
)

// productName returns a name for product id drawn from r.
func productName(id int, r *rng) string {
	adj := pick(r, adjectives)
	if id%5 == 0 {
		adj = pick(r, accented)
	}
	return adj + " " + pick(r, nouns)
}

// defaultProducts returns n, or def when n is 0, and at least least.
func defaultProducts(n, def, least int) int {
	if n == 0 {
		n = def
	}
	return max(n, least)
}

// pickTags returns 0 to max distinct tags.
func pickTags(r *rng, max int) []string {
	n := r.intn(max + 1)
	out := make([]string, 0, n)
	for len(out) < n {
		if t := pick(r, tagWords); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// code returns a product code such as "JL-0007".
func code(prefix string, id int) string { return fmt.Sprintf("%s-%04d", prefix, id) }

// cents returns a price in [lo, hi] whole units, in cents.
func cents(r *rng, lo, hi int) int64 {
	return int64(r.between(lo*100, hi*100))
}

// money returns cents as a float64, exactly as parsing its two-decimal
// text gives it.
func money(c int64) float64 { return float64(c) / 100 }

// pages returns the number of listing pages n products fill, at least 1.
func pages(n, per int) int { return max(1, (n+per-1)/per) }

// pageRange returns the products (1-based, inclusive) on listing page p.
func pageRange(p, n, per int) (first, last int) {
	return (p-1)*per + 1, min(p*per, n)
}

// lower returns s lower-cased, for URL slugs.
func lower(s string) string { return strings.ToLower(s) }

// groupThousands writes n with sep between groups of three digits.
func groupThousands(n int64, sep string) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + sep + s[i:]
	}
	return s
}

// twoDigits writes n (0-99) with two digits.
func twoDigits(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// slugAccents spells accented letters in ASCII, for URL slugs.
var slugAccents = strings.NewReplacer("é", "e", "è", "e", "É", "e", "ç", "c", "ñ", "n", "ï", "i", "û", "u",
	"ä", "ae", "ö", "oe", "ü", "ue", "ß", "ss", "Ä", "ae", "Ö", "oe", "Ü", "ue", "'", "", "’", "")

// slug returns a URL slug for name and product n: "cafe-mug-5".
func slug(name string, n int) string {
	return lower(strings.ReplaceAll(slugAccents.Replace(name), " ", "-")) + "-" + strconv.Itoa(n)
}

// sessionID returns a session ID for request n: 32 hex digits, as PHP
// writes one.
func sessionID(n int64) string {
	return fmt.Sprintf("%016x%016x", mix(uint64(n)), mix(uint64(n)^0x5e5510))
}

// validParamName reports whether name is a plain URL parameter name:
// ASCII letters, digits and _.
func validParamName(name string) bool {
	for _, r := range name {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return name != ""
}
