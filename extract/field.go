package extract

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"github.com/databrew/databrew-stage/extract/jsliteral"
)

// field is a FieldSpec ready to run.
type field struct {
	FieldSpec
	sels     []selector // CSS, in order
	json     *jsonExpr  // JSON, nil when unset
	jsName   string     // JS in its canonical form (see jsliteral.Canonical)
	re       *regexp.Regexp
	attr     string // lowercased Attr
	mapping  *mapping
	def      any  // typed Default
	hasDef   bool // Default is set
	comma    bool // Decimal is ","
	page     bool // Scope is "page"
	required bool // Required, or the key field
}

// selector is one compiled CSS selector of a field.
type selector struct {
	css   string
	sel   cascadia.Selector // nil for a bare ":scope"
	first goquery.Matcher   // sel stopping at the first match
	scope bool              // ":scope": the row or card itself, when sel matches it
}

// nodes returns the elements s selects under root, or with first set
// the first of them (the rest may follow).
func (s *selector) nodes(root *goquery.Selection, first bool) []*html.Node {
	if s.scope {
		if n := root.Nodes[0]; s.sel == nil || s.sel.Match(n) {
			return []*html.Node{n}
		}
		return nil
	}
	if first {
		return root.FindMatcher(s.first).Nodes
	}
	return root.FindMatcher(s.sel).Nodes
}

// compileSelector compiles one selector of a field. A leading ":scope",
// which cascadia lacks, stands for the row or card element itself: alone,
// or with a compound selector it must match (":scope.sale"); ":scope a"
// is "a", as fields are read inside the row or card anyway.
func compileSelector(css string) (selector, error) {
	s := strings.TrimSpace(css)
	if s == "" {
		return selector{}, errors.New("empty selector")
	}
	if len(s) >= len(":scope") && strings.EqualFold(s[:len(":scope")], ":scope") {
		rest := s[len(":scope"):]
		switch {
		case rest == "":
			return selector{css: css, scope: true}, nil
		case rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n':
			rest = strings.TrimSpace(rest)
			if strings.ContainsAny(rest[:1], ">+~,") {
				return selector{}, fmt.Errorf("%q: only \":scope\" alone, \":scope.class\" or \":scope descendant\" is supported", css)
			}
			s = rest
		case strings.ContainsAny(rest[:1], ".#[:") && !strings.ContainsAny(rest, " \t\n,>+~"):
			sel, err := compileCSS("*" + rest)
			if err != nil {
				return selector{}, fmt.Errorf("invalid selector %q: %w", css, err)
			}
			return selector{css: css, sel: sel, scope: true}, nil
		default:
			return selector{}, fmt.Errorf("%q: only \":scope\" alone, \":scope.class\" or \":scope descendant\" is supported", css)
		}
	}
	sel, err := compileCSS(s)
	if err != nil {
		if strings.Contains(strings.ToLower(s), ":scope") {
			return selector{}, fmt.Errorf("%w (\":scope\" must start the selector)", err)
		}
		return selector{}, err
	}
	return selector{css: css, sel: sel, first: goquery.SingleMatcher(sel)}, nil
}

// compileField checks one field (fs.Type already defaulted) and compiles
// it; kind is the format of the documents items are read from.
func compileField(fs FieldSpec, path string, kind Format, bad func(string, string, error)) field {
	f := field{FieldSpec: fs, required: fs.Required, attr: strings.ToLower(fs.Attr),
		comma: fs.Decimal == DecimalComma, page: fs.Scope == ScopePage}
	compileSource(&f, path, kind, bad)
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
	switch {
	case fs.Decimal != "" && fs.Decimal != DecimalPoint && fs.Decimal != DecimalComma:
		bad(path, "decimal", fmt.Errorf(`must be "." or ","`))
	case fs.Decimal != "" && fs.Type != TypeInt64 && fs.Type != TypeFloat64:
		bad(path, "decimal", fmt.Errorf("only int64 and float64 fields take a decimal point, not %s", fs.Type))
	}
	if fs.Scope != "" && fs.Scope != ScopePage {
		bad(path, "scope", fmt.Errorf(`must be "page" (or unset: the row), got %q`, fs.Scope))
	}
	if fs.Map != nil && fs.Type.Valid() {
		mp, errs := compileMap(&f.FieldSpec, fs.Map)
		for _, err := range errs {
			bad(path, "map", err)
		}
		f.mapping = mp
	}
	if fs.Default != nil && fs.Type.Valid() {
		compileDefault(&f, path, bad)
	}
	return f
}

// compileSource checks that the field has one source that suits kind and
// compiles it.
func compileSource(f *field, path string, kind Format, bad func(string, string, error)) {
	fs := &f.FieldSpec
	if fs.JS != "" {
		compileJS(f, path, kind, bad)
	}
	switch {
	case fs.JS != "":
	case len(fs.CSS) == 0 && fs.JSON == "" && fs.JSONLD == "":
		if kind == FormatJSON {
			bad(path, "json", errors.New(`required: the JMESPath expression of the value, e.g. json = "name"`))
		} else {
			bad(path, "css", errors.New(`required: a source, css = "selector" (or jsonld = "Type" with json = "expression")`))
		}
		return
	case fs.JSONLD != "" && len(fs.CSS) > 0:
		bad(path, "jsonld", errors.New("a field has one source: css or jsonld, not both"))
	case fs.JSONLD != "" && fs.JSON == "":
		bad(path, "json", fmt.Errorf("required with jsonld: the JMESPath expression that picks the value from the %s object, e.g. json = \"name\"", fs.JSONLD))
	case kind == FormatJSON && len(fs.CSS) > 0:
		bad(path, "css", errors.New("items are read from JSON documents here: css reads HTML; use json = \"expression\""))
	case kind == FormatJSON && fs.JSONLD != "":
		bad(path, "jsonld", errors.New("items are read from JSON documents here: jsonld reads HTML script blocks; use json = \"expression\""))
	case kind != FormatJSON && fs.JSON != "" && len(fs.CSS) == 0 && fs.JSONLD == "":
		bad(path, "json", errors.New(`json alone reads a JSON document, and items are read from HTML here: add css (JSON in an element) or jsonld, or set format = "json"`))
	}
	if fs.Attr != "" && len(fs.CSS) == 0 {
		bad(path, "attr", errors.New("only with css: attr reads an attribute of the selected element"))
	}
	for i, css := range fs.CSS {
		sel, err := compileSelector(css)
		if err != nil {
			if len(fs.CSS) > 1 {
				err = fmt.Errorf("selector %d: %w", i+1, err)
			}
			bad(path, "css", err)
			continue
		}
		f.sels = append(f.sels, sel)
	}
	if fs.JSON != "" {
		jp, err := compileJSON(fs.JSON)
		if err != nil {
			bad(path, "json", err)
		}
		f.json = jp
	}
}

// compileJS checks a js source: a dotted JavaScript name, alone or with
// json, on HTML pages.
func compileJS(f *field, path string, kind Format, bad func(string, string, error)) {
	fs := &f.FieldSpec
	name, err := jsliteral.Canonical(fs.JS)
	switch {
	case err != nil:
		bad(path, "js", err)
	case len(fs.CSS) > 0 || fs.JSONLD != "":
		bad(path, "js", errors.New("a field has one source: js, css or jsonld"))
	case kind == FormatJSON:
		bad(path, "js", errors.New("items are read from JSON documents here: js reads the inline scripts of an HTML page"))
	}
	f.jsName = name
}

// compileDefault checks and types the field's default.
func compileDefault(f *field, path string, bad func(string, string, error)) {
	switch {
	case f.Required:
		bad(path, "default", errors.New("a required field takes no default: finding nothing makes the item unusable"))
		return
	case f.Multiple:
		bad(path, "default", errors.New("a multiple field takes no default: finding nothing makes it an empty list"))
		return
	}
	to, err := mapValue(&f.FieldSpec, f.Default)
	if err != nil {
		bad(path, "default", err)
		return
	}
	f.def, f.hasDef = to.value, true
	if to.isText {
		f.def, _ = parseText(&f.FieldSpec, to.text)
		if f.Type == TypeString {
			f.def = to.text
		}
	}
}
