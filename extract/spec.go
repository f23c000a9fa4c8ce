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

// Format is how a page is written: HTML, or a JSON document.
type Format string

// The page formats; an empty Format means FormatHTML.
const (
	FormatHTML Format = "html"
	FormatJSON Format = "json"
)

// Valid reports whether f is empty or a known format.
func (f Format) Valid() bool { return f == "" || f == FormatHTML || f == FormatJSON }

// orHTML returns f, or FormatHTML when it is empty.
func (f Format) orHTML() Format {
	if f == "" {
		return FormatHTML
	}
	return f
}

// ScopePage is the FieldSpec.Scope that reads a field from the item's
// whole page instead of its row.
const ScopePage = "page"

// Decimal points a FieldSpec.Decimal can name.
const (
	DecimalPoint = "."
	DecimalComma = ","
)

// FieldSpec declares one field of an item: where its value is and what it
// becomes. A field has one source: CSS; JSONLD with JSON; JSON alone (on
// a JSON page, card or row); or CSS with JSON (JSON in the selected
// element's text or Attr). The value then goes through Attr, Regex, Map,
// Decimal, Type and Default, in that order.
type FieldSpec struct {
	// Name is the field's name, also its column name.
	Name string
	// CSS lists selectors of the elements the field reads, relative to the
	// row, the card or the page: each in turn, the first that yields a
	// value wins. ":scope" is the row or card element itself.
	CSS []string
	// JSONLD reads the first JSON-LD object of this @type on the page
	// (inside the row or card unless Scope is "page"); JSON then picks the
	// value from it.
	JSONLD string
	// JS reads the value the page's inline scripts assign to this dotted
	// JavaScript name (window.__INITIAL_STATE__), parsed with JavaScript
	// object-literal tolerance (see package jsliteral); JSON then picks
	// the value from it, or without JSON it is the value.
	JS string
	// JSON is a JMESPath expression: on the JSON page, card or row, on the
	// JSONLD object or the JS value, or with CSS on the parsed text of the
	// selected element.
	JSON string
	// Type is the type of the field's values; empty means string.
	Type Type
	// Attr reads this attribute instead of the element's text (CSS only).
	Attr string
	// Regex keeps only the match (its first capture group when it has one).
	Regex string
	// Map replaces a text matched case-insensitively by a key: exact keys
	// first, then glob patterns (* and ?) longest first, "*" alone last.
	// Values are bool, int64, float64 or string, as TOML gives them, and
	// must suit Type; a string value is read as the field's text would be.
	// Text no key matches goes on unchanged.
	Map map[string]any
	// Decimal is the decimal point of numbers: "." (the default, with ","
	// grouping thousands) or "," (with ".", spaces and no-break spaces
	// grouping thousands). Number fields only.
	Decimal string
	// Default is the value when the field finds nothing (no element, empty
	// text, no regex match, JSON null or []); nil means none, and the value
	// is then NULL. Typed like the field; never with Required or Multiple.
	Default any
	// URL resolves the value against the URL of the document it came from
	// (string fields only).
	URL bool
	// Required makes an item that lacks the field unusable.
	Required bool
	// Multiple makes the field a list of every match instead of the first.
	Multiple bool
	// Scope "page" reads the field from the whole page instead of the row
	// (ItemSpec.Rows); for an item read from a listing card, the page is
	// the card. Empty reads the row, or the card or page without rows.
	Scope string
	// Format is the time layout of a timestamp field (Go reference time);
	// empty tries RFC 3339, RFC 1123 and plain dates.
	Format string
}

// ListingSpec declares what a listing page holds. Its selectors are CSS
// for an HTML listing and JMESPath expressions for a JSON one.
type ListingSpec struct {
	// Format is the format of every listing page; empty means HTML.
	Format Format
	// ItemLinks selects links (href) to item pages; in JSON, an expression
	// giving a URL string or a list of them. With Items set it names each
	// card's link: inside the card (HTML) or on the card object (JSON).
	ItemLinks string
	// NextPage selects links to further listing pages (href, or
	// NextPageAttr); in JSON, an expression giving the next URL (null or
	// missing ends the chain).
	NextPage string
	// NextPageAttr is the attribute of a NextPage element that holds the
	// URL (HTML only); empty means href.
	NextPageAttr string
	// NextCursor says NextPage's value (JSON only) is a cursor for the
	// next listing request (next_page with param or body), not a URL: it
	// is Listing.Cursor.
	NextCursor bool
	// Items, when set, selects item cards on the listing page itself (in
	// JSON, an expression giving an array of objects); item fields are
	// then read relative to each card and item pages are not fetched.
	Items string
	// Card, when set, selects the element around each item link (the
	// closest ancestor, or the link itself, that matches): the listing
	// yields a digest of its HTML with the link, so a change in what the
	// card shows (a price, a stock badge) is seen without the item page.
	Card string
	// ItemsScript and ItemLinksScript, when set, read a listing's cards
	// and item links from JSON inside an HTML listing page instead of
	// Items and ItemLinks (SPEC 6c): the cards are read as a JSON
	// listing's are.
	ItemsScript, ItemLinksScript *ScriptSource
	// End, when set, selects what marks an HTML listing page as the end
	// of a pages chain (a "no results" notice): a page that yields nothing
	// and matches it is the end, one that does not match is a coverage
	// gap (HTML only).
	End string
	// MaxLinks bounds what one listing page yields: at most MaxLinks item
	// links, MaxLinks cards and MaxLinks next-page links, the first in
	// document order; the rest are counted in Listing.Dropped. 0 means no
	// bound.
	MaxLinks int
}

// ScriptSource is JSON inside an HTML page: the value an inline script
// assigns to JS (see FieldSpec.JS), or the text of the first element CSS
// matches whose text parses as JSON; then JSON, a JMESPath expression, on
// it ("@" takes all of it).
type ScriptSource struct {
	CSS, JS, JSON string
}

// HasCards reports whether the listing reads items from its cards.
func (l ListingSpec) HasCards() bool { return l.Items != "" || l.ItemsScript != nil }

// ItemSpec declares what an item page holds besides its fields.
type ItemSpec struct {
	// Format is the format of item pages; empty means HTML. A card from a
	// JSON listing is a JSON object whatever Format says.
	Format Format
	// Rows, when set, makes each match on an item page or card one item:
	// CSS on HTML, a JMESPath expression giving an array of objects on
	// JSON. Fields are read inside the row unless their Scope is "page".
	Rows string
	// StrictTypes makes an item with a type error (a value found that its
	// field's type does not take) unusable, rather than the field NULL.
	StrictTypes bool
}

// Spec is everything extraction needs: the listing, the item pages, the
// item fields in declared order, and the field that keys an item (empty:
// its URL).
type Spec struct {
	Listing ListingSpec
	Item    ItemSpec
	Fields  []FieldSpec
	Key     string
	// IgnoreParams are the URL parameter name patterns (see package
	// urlparams) dropped from the URLs an item carries: its card's link
	// and its url fields.
	IgnoreParams []string
}
