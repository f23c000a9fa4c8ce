package extract

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
)

// Extractor reads listings and items from parsed pages according to a
// compiled Spec. It is immutable and safe for concurrent use.
type Extractor struct {
	spec      Spec
	itemLinks cascadia.Selector // nil when unset
	firstLink goquery.Matcher   // itemLinks stopping at the first match
	nextPage  cascadia.Selector // nil when unset
	items     cascadia.Selector // nil when unset
	fields    []field
	key       int  // index of the key field, -1 for the item URL
	urlFields bool // some field resolves URLs
}

// cascadia.Selector is used directly as a goquery.Matcher.
var _ goquery.Matcher = cascadia.Selector(nil)

// field is a FieldSpec ready to run.
type field struct {
	FieldSpec
	sel      cascadia.Selector
	first    goquery.Matcher // sel stopping at the first match
	re       *regexp.Regexp
	attr     string // lowercased Attr
	required bool   // Required, or the key field
}

// Compile checks spec and compiles its selectors and regular expressions.
// All problems are returned together, joined with errors.Join; each is a
// *SpecError (see SpecErrors).
func Compile(spec Spec) (*Extractor, error) {
	var errs []error
	bad := func(fieldPath, key string, err error) {
		errs = append(errs, &SpecError{Field: fieldPath, Key: key, Err: err})
	}
	x := &Extractor{key: -1}
	x.spec = spec
	x.spec.Fields = make([]FieldSpec, len(spec.Fields))

	if spec.Listing.ItemLinks == "" && spec.Listing.Items == "" && !spec.Listing.FromSitemaps {
		bad("listing.item_links", "css", errors.New("required unless listing.items or listing.sitemaps is set"))
	}
	x.itemLinks = compileOptional(spec.Listing.ItemLinks, "listing.item_links", bad)
	x.nextPage = compileOptional(spec.Listing.NextPage, "listing.next_page", bad)
	x.items = compileOptional(spec.Listing.Items, "listing.items", bad)
	if x.itemLinks != nil {
		x.firstLink = goquery.SingleMatcher(x.itemLinks)
	}

	seen := make(map[string]int, len(spec.Fields))
	x.fields = make([]field, len(spec.Fields))
	for i, fs := range spec.Fields {
		if fs.Type == "" {
			fs.Type = TypeString
		}
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
		x.fields[i] = compileField(fs, path, bad)
		if fs.URL && fs.Type == TypeString {
			x.urlFields = true
		}
	}

	if spec.Key != "" {
		j, ok := seen[spec.Key]
		switch {
		case !ok:
			bad("item", "key", fmt.Errorf("no field named %q", spec.Key))
		case spec.Fields[j].Multiple:
			bad("item", "key", fmt.Errorf("field %q is multiple; a key needs one value", spec.Key))
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

// compileOptional compiles a listing selector when it is set.
func compileOptional(css, path string, bad func(string, string, error)) cascadia.Selector {
	if css == "" {
		return nil
	}
	sel, err := compileCSS(css)
	if err != nil {
		bad(path, "css", err)
	}
	return sel
}

// compileCSS compiles a selector group ("a, b") into a goquery Matcher.
func compileCSS(css string) (cascadia.Selector, error) {
	group, err := cascadia.ParseGroup(css)
	if err != nil {
		return nil, fmt.Errorf("invalid selector %q: %w", css, err)
	}
	return cascadia.Selector(group.Match), nil
}

// compileField checks one field (fs.Type already defaulted) and compiles it.
func compileField(fs FieldSpec, path string, bad func(string, string, error)) field {
	f := field{FieldSpec: fs, required: fs.Required, attr: strings.ToLower(fs.Attr)}
	if fs.CSS == "" {
		bad(path, "css", errors.New("required"))
	} else if sel, err := compileCSS(fs.CSS); err != nil {
		bad(path, "css", err)
	} else {
		f.sel, f.first = sel, goquery.SingleMatcher(sel)
	}
	if !fs.Type.Valid() {
		bad(path, "type", fmt.Errorf("unknown type %q (want one of %s)", fs.Type, typeList()))
	}
	if fs.Regex != "" {
		re, err := regexp.Compile(fs.Regex)
		switch {
		case err != nil:
			bad(path, "regex", err)
		case re.NumSubexp() > 1:
			bad(path, "regex", fmt.Errorf("%d capture groups, want at most one", re.NumSubexp()))
		default:
			f.re = re
		}
	}
	if fs.URL && fs.Type != TypeString {
		bad(path, "url", fmt.Errorf("only string fields can be URLs, not %s", fs.Type))
	}
	if fs.Format != "" && fs.Type != TypeTimestamp {
		bad(path, "format", fmt.Errorf("only timestamp fields take a format, not %s", fs.Type))
	}
	return f
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
	return append([]FieldSpec(nil), x.spec.Fields...)
}
