package shopsites

import (
	"fmt"
	"net/http"
)

// What some catalogs do beyond serving GET requests: answer POST, print
// values their config cannot parse on purpose, change their prices
// between runs.

// poster is a catalog that also answers POST requests.
type poster interface {
	// servePost answers a POST request; n is its ordinal.
	servePost(w http.ResponseWriter, r *http.Request, n int64)
}

// typeErrorer is a catalog some of whose values a correct crawl reads
// but cannot parse as their field's type.
type typeErrorer interface {
	// typeErrors returns the count per field name.
	typeErrors() map[string]int
}

// TypeErrors returns, per field name, how many items a correct crawl of
// the shop with Config counts a type error in (SPEC 6c, "Type errors are
// loud"): a value the shop prints that its field's type does not take.
// Fields without one are absent; most kinds return an empty map.
func (s *Shop) TypeErrors() map[string]int {
	out := map[string]int{}
	if te, ok := s.cat.(typeErrorer); ok {
		for k, v := range te.typeErrors() {
			out[k] = v
		}
	}
	return out
}

// repricer is a catalog whose prices can change while it serves.
type repricer interface {
	// setPrice sets the price of the product with key, in cents, and
	// reports whether the shop has that product.
	setPrice(key string, cents int64) bool
}

// SetPrice changes the price of the product whose key is key to cents
// hundredths, from the next request on; Truth follows. It is for tests
// that run a crawl again; a kind that supports it says so in its file, and
// it fails for other kinds and for a key the shop does not have.
func (s *Shop) SetPrice(key string, cents int64) error {
	rp, ok := s.cat.(repricer)
	if !ok {
		return fmt.Errorf("shopsites: the %s shop's prices do not change", s.kind)
	}
	if !rp.setPrice(key, cents) {
		return fmt.Errorf("shopsites: the %s shop has no product %q", s.kind, key)
	}
	return nil
}
