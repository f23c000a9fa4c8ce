package extract

// Type is the type of a field's values.
type Type string

// The field types a config can declare.
const (
	TypeString    Type = "string"
	TypeInt64     Type = "int64"
	TypeFloat64   Type = "float64"
	TypeBool      Type = "bool"
	TypeTimestamp Type = "timestamp"
)

// Types lists the field types in the order the documentation gives them.
var Types = []Type{TypeString, TypeInt64, TypeFloat64, TypeBool, TypeTimestamp}

// Valid reports whether t is a known field type.
func (t Type) Valid() bool {
	for _, known := range Types {
		if t == known {
			return true
		}
	}
	return false
}

// FieldSpec declares one field of an item: where its text is and what it
// becomes.
type FieldSpec struct {
	// Name is the field's name, also its column name.
	Name string
	// CSS selects the elements the field reads, relative to the item page's
	// document or to a listing card.
	CSS string
	// Type is the type of the field's values; empty means string.
	Type Type
	// Attr reads this attribute instead of the element's text.
	Attr string
	// Regex keeps only the match (its first capture group when it has one).
	Regex string
	// URL resolves the value against the page URL (string fields only).
	URL bool
	// Required makes an item that lacks the field unusable.
	Required bool
	// Multiple makes the field a list of every match instead of the first.
	Multiple bool
	// Format is the time layout of a timestamp field (Go reference time);
	// empty tries RFC 3339, RFC 1123 and plain dates.
	Format string
}

// ListingSpec declares what a listing page holds.
type ListingSpec struct {
	// ItemLinks selects links (href) to item pages.
	ItemLinks string
	// NextPage selects links (href) to further listing pages.
	NextPage string
	// Items, when set, selects item cards on the listing page itself; item
	// fields are then read relative to each card and item pages are not
	// fetched.
	Items string
	// FromSitemaps says item page URLs come from sitemaps: neither
	// ItemLinks nor Items is then required.
	FromSitemaps bool
	// MaxLinks bounds what one listing page yields: at most MaxLinks item
	// links, MaxLinks cards and MaxLinks next-page links, the first in
	// document order; the rest are counted in Listing.Dropped. 0 means no
	// bound.
	MaxLinks int
}

// Spec is everything extraction needs: the listing, the item fields in
// declared order, and the field that keys an item (empty: its URL).
type Spec struct {
	Listing ListingSpec
	Fields  []FieldSpec
	Key     string
}
