package extract

import (
	"mime"
	"slices"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
)

// scriptSel finds script elements that declare a type.
var scriptSel = cascadia.MustCompile("script[type]")

// ldBlocks holds the JSON-LD of one row, card or page: its script blocks,
// parsed, in document order, and the objects found so far by @type.
type ldBlocks struct {
	blocks []any
	bad    int // blocks that are not JSON
	byType map[string]map[string]any
}

// readLD parses the JSON-LD script blocks under root.
func readLD(root *goquery.Selection, w *normalizer) *ldBlocks {
	ld := &ldBlocks{}
	for _, n := range root.FindMatcher(scriptSel).Nodes {
		if !isLDScript(n) {
			continue
		}
		v, err := decodeFirstJSON(rawText(w, n))
		if err != nil {
			ld.bad++
			continue
		}
		ld.blocks = append(ld.blocks, v)
	}
	return ld
}

// isLDScript reports whether a script element holds JSON-LD.
func isLDScript(n *html.Node) bool {
	for _, a := range n.Attr {
		if a.Key == "type" && a.Namespace == "" {
			mt, _, err := mime.ParseMediaType(a.Val)
			return err == nil && mt == "application/ld+json"
		}
	}
	return false
}

// find returns the first JSON-LD object of @type typ: among the blocks'
// top-level objects, the members of their @graph and the elements of
// top-level arrays, in document order; else the first nested one, found
// depth first with an object's properties in name order.
func (ld *ldBlocks) find(typ string) map[string]any {
	if obj, ok := ld.byType[typ]; ok {
		return obj
	}
	var obj map[string]any
	for _, b := range ld.blocks {
		if obj = findTop(b, typ); obj != nil {
			break
		}
	}
	if obj == nil {
		for _, b := range ld.blocks {
			if obj = findNested(b, typ); obj != nil {
				break
			}
		}
	}
	if ld.byType == nil {
		ld.byType = make(map[string]map[string]any, 1)
	}
	ld.byType[typ] = obj
	return obj
}

// findTop looks at v, the members of its @graph and, for an array, its
// elements, the same way.
func findTop(v any, typ string) map[string]any {
	switch v := v.(type) {
	case map[string]any:
		if hasType(v, typ) {
			return v
		}
		if g, ok := v["@graph"]; ok {
			return findTop(g, typ)
		}
	case []any:
		for _, e := range v {
			if obj := findTop(e, typ); obj != nil {
				return obj
			}
		}
	}
	return nil
}

// findNested searches v depth first.
func findNested(v any, typ string) map[string]any {
	switch v := v.(type) {
	case map[string]any:
		if hasType(v, typ) {
			return v
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if obj := findNested(v[k], typ); obj != nil {
				return obj
			}
		}
	case []any:
		for _, e := range v {
			if obj := findNested(e, typ); obj != nil {
				return obj
			}
		}
	}
	return nil
}

// hasType reports whether obj's @type, a string or an array of them, is
// typ, also written as a URL or prefixed name ("https://schema.org/Product",
// "schema:Product").
func hasType(obj map[string]any, typ string) bool {
	switch t := obj["@type"].(type) {
	case string:
		return typeIs(t, typ)
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok && typeIs(s, typ) {
				return true
			}
		}
	}
	return false
}

func typeIs(t, typ string) bool {
	t = strings.TrimSpace(t)
	if t == typ {
		return true
	}
	i := strings.LastIndexAny(t, "/:#")
	return i >= 0 && t[i+1:] == typ
}
