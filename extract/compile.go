package extract

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"

	"github.com/databrew/databrew-stage/urlparams"
)

// Extractor reads listings and items from parsed pages according to a
// compiled Spec. It is immutable and safe for concurrent use.
type Extractor struct {
	spec Spec
	// kind is the format items are read from: the listing's when cards
	// are items, else the item pages'. Fields and rows are checked
	// against it.
	kind Format

	// An HTML listing; each nil when unset.
	itemLinks cascadia.Selector
	firstLink goquery.Matcher // itemLinks stopping at the first match
	nextPage  cascadia.Selector
	nextAttr  string // the attribute holding a next page's URL
	items     cascadia.Selector
	card      cascadia.Selector // [revisit] card around an item link
	end       cascadia.Selector // the end of a pages chain

	// JSON inside an HTML listing; each nil when unset.
	scriptItems, scriptItemLinks *scriptSource

	// A JSON listing; each nil when unset.
	itemLinksJSON *jsonExpr
	nextPageJSON  *jsonExpr
	itemsJSON     *jsonExpr

	// Item rows, in the format of kind; nil when unset.
	rowsCSS  cascadia.Selector
	rowsJSON *jsonExpr

	// params drops the volatile parameters of the URLs an item carries.
	params *urlparams.Filter

	fields    []field
	key       int  // index of the key field, -1 for the item URL
	urlField  int  // index of the first scalar URL field, -1 when none
	urlFields bool // some field resolves URLs
}

// cascadia.Selector is used directly as a goquery.Matcher.
var _ goquery.Matcher = cascadia.Selector(nil)

// Compile checks spec and compiles its selectors, expressions and regular
// expressions. All problems are returned together, joined with
// errors.Join; each is a *SpecError (see SpecErrors).
func Compile(spec Spec) (*Extractor, error) {
	var errs []error
	bad := func(fieldPath, key string, err error) {
		errs = append(errs, &SpecError{Field: fieldPath, Key: key, Err: err})
	}
	x := &Extractor{key: -1, urlField: -1}
	x.spec = spec
	x.spec.Fields = make([]FieldSpec, len(spec.Fields))

	x.compileListing(spec.Listing, bad)
	var err error
	if x.params, err = urlparams.New(spec.IgnoreParams); err != nil {
		bad("", "ignore_params", err)
	}
	x.spec.IgnoreParams = slices.Clone(spec.IgnoreParams)
	x.kind = spec.Item.Format.orHTML()
	switch {
	case spec.Listing.ItemsScript != nil:
		x.kind = FormatJSON // cards of JSON in the page
	case spec.Listing.Items != "":
		x.kind = spec.Listing.Format.orHTML()
	}
	x.compileItem(spec, bad)

	seen := make(map[string]int, len(spec.Fields))
	x.fields = make([]field, len(spec.Fields))
	for i, fs := range spec.Fields {
		if fs.Type == "" {
			fs.Type = TypeString
		}
		fs.CSS, fs.Map = slices.Clone(fs.CSS), maps.Clone(fs.Map)
		x.spec.Fields[i] = fs
		path := "item.fields." + fs.Name
		if fs.Name == "" {
			path = "item.fields[" + strconv.Itoa(i) + "]"
		}
		if err := checkName(fs.Name); err != nil {
			bad(path, "name", err)
		} else if j, dup := seen[fs.Name]; dup {
			bad(path, "name", fmt.Errorf("duplicate field name (also field %d)", j))
		} else {
			seen[fs.Name] = i
		}
		x.fields[i] = compileField(fs, path, x.kind, bad)
		if fs.URL && fs.Type == TypeString {
			x.urlFields = true
			if x.urlField < 0 && !fs.Multiple {
				x.urlField = i
			}
		}
	}

	if spec.Key != "" {
		j, ok := seen[spec.Key]
		switch {
		case !ok:
			bad("item", "key", fmt.Errorf("no field named %q", spec.Key))
		case spec.Fields[j].Multiple:
			bad("item", "key", fmt.Errorf("field %q is multiple; a key needs one value", spec.Key))
		case spec.Fields[j].Default != nil:
			bad("item.fields."+spec.Key, "default", errors.New("the key field is required and takes no default"))
		default:
			x.key = j
			x.fields[j].required = true
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return x, nil
}

// compileListing compiles the listing's selectors or expressions.
func (x *Extractor) compileListing(ls ListingSpec, bad func(string, string, error)) {
	if !ls.Format.Valid() {
		bad("listing", "format", fmt.Errorf(`must be "html" or "json", got %q`, ls.Format))
		return
	}
	if ls.Format == FormatJSON {
		x.itemLinksJSON = compileOptionalJSON(ls.ItemLinks, "item_links", bad)
		x.nextPageJSON = compileOptionalJSON(ls.NextPage, "next_page", bad)
		x.itemsJSON = compileOptionalJSON(ls.Items, "items", bad)
		if ls.NextPageAttr != "" {
			bad("listing.next_page", "attr", errors.New("only for an html listing: a json listing's next_page is an expression giving the URL"))
		}
		if ls.End != "" {
			bad("listing", "end", errors.New("only for an html listing: a json pages chain ends on a page whose items are an empty array"))
		}
		if ls.ItemsScript != nil || ls.ItemLinksScript != nil {
			bad("listing", "items", errors.New(`a table reads JSON inside an HTML listing page; a json listing's items and item_links are expressions`))
		}
		return
	}
	x.itemLinks = compileOptional(ls.ItemLinks, "item_links", bad)
	x.nextPage = compileOptional(ls.NextPage, "next_page", bad)
	x.items = compileOptional(ls.Items, "items", bad)
	x.card = compileOptional(ls.Card, "card", bad)
	x.end = compileOptional(ls.End, "end", bad)
	x.scriptItems = compileScript(ls.ItemsScript, "items", bad)
	x.scriptItemLinks = compileScript(ls.ItemLinksScript, "item_links", bad)
	if x.itemLinks != nil {
		x.firstLink = goquery.SingleMatcher(x.itemLinks)
	}
	x.nextAttr = "href"
	if ls.NextPageAttr != "" {
		x.nextAttr = strings.ToLower(strings.TrimSpace(ls.NextPageAttr))
		if ls.NextPage == "" {
			bad("listing.next_page", "attr", errors.New("needs a css selector of the element holding the attribute"))
		}
	}
}

// compileItem checks the item format and compiles the rows.
func (x *Extractor) compileItem(spec Spec, bad func(string, string, error)) {
	if !spec.Item.Format.Valid() {
		bad("item", "format", fmt.Errorf(`must be "html" or "json", got %q`, spec.Item.Format))
	}
	if spec.Item.Rows == "" {
		return
	}
	if spec.Key == "" {
		bad("item", "rows", errors.New("needs item.key: the rows of a page share its URL, which keys an item by default"))
	}
	if x.kind == FormatJSON {
		x.rowsJSON = compileOptionalJSON(spec.Item.Rows, "rows", func(_, key string, err error) { bad("item", key, err) })
		return
	}
	x.rowsCSS = compileOptional(spec.Item.Rows, "rows", func(_, key string, err error) { bad("item", key, err) })
}

// compileOptional compiles a listing selector when it is set.
func compileOptional(css, key string, bad func(string, string, error)) cascadia.Selector {
	if css == "" {
		return nil
	}
	sel, err := compileCSS(css)
	if err != nil {
		bad("listing", key, err)
	}
	return sel
}

// compileOptionalJSON compiles a listing expression when it is set.
func compileOptionalJSON(expr, key string, bad func(string, string, error)) *jsonExpr {
	if expr == "" {
		return nil
	}
	jp, err := compileJSON(expr)
	if err != nil {
		bad("listing", key, err)
	}
	return jp
}

// compileCSS compiles a selector group ("a, b") into a goquery Matcher.
func compileCSS(css string) (cascadia.Selector, error) {
	group, err := cascadia.ParseGroup(css)
	if err != nil {
		return nil, fmt.Errorf("invalid selector %q: %w", css, err)
	}
	return cascadia.Selector(group.Match), nil
}

// checkName enforces ^[a-z_][a-z0-9_]*$ without a leading underscore.
func checkName(name string) error {
	if name == "" {
		return errors.New("required")
	}
	if name[0] == '_' {
		return fmt.Errorf("%q: names starting with _ are reserved for system columns", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return fmt.Errorf("%q must match ^[a-z_][a-z0-9_]*$", name)
		}
	}
	return nil
}

func typeList() string {
	names := make([]string, len(Types))
	for i, t := range Types {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// Spec returns the compiled spec with defaults filled in (Type "string"
// where it was empty).
func (x *Extractor) Spec() Spec {
	s := x.spec
	s.Fields = x.Fields()
	return s
}

// Fields returns the item fields in declared order, defaults filled in.
// Item values are aligned with this order.
func (x *Extractor) Fields() []FieldSpec {
	out := slices.Clone(x.spec.Fields)
	for i := range out {
		out[i].CSS = slices.Clone(out[i].CSS)
		out[i].Map = maps.Clone(out[i].Map)
	}
	return out
}

// ListingFormat returns the format of listing pages.
func (x *Extractor) ListingFormat() Format { return x.spec.Listing.Format.orHTML() }

// ItemFormat returns the format of item pages.
func (x *Extractor) ItemFormat() Format { return x.spec.Item.Format.orHTML() }
