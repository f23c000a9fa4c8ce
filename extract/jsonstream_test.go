package extract

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// streamCard are the fields of a card in the stream tests: plain paths,
// a computed one, a list, a URL.
var streamCard = []FieldSpec{
	{Name: "id", JSON: "id", Type: TypeInt64},
	{Name: "name", JSON: "name || title", Required: true},
	{Name: "price", JSON: "price", Type: TypeFloat64},
	{Name: "stock", JSON: "sum(variants[].stock)", Type: TypeInt64},
	{Name: "skus", JSON: "variants[].sku", Multiple: true},
	{Name: "link", JSON: "url", URL: true},
}

// streamSpecs are listings ReadListingJSON reads one element at a time
// (the first ones) or as a tree (the last ones): the result must be the
// same either way.
func streamSpecs() []Spec {
	cards := func(items, links, next string, maxLinks int) Spec {
		return Spec{Listing: ListingSpec{Format: FormatJSON, Items: items, ItemLinks: links, NextPage: next, MaxLinks: maxLinks}, Fields: streamCard}
	}
	links := func(expr, next string, maxLinks int) Spec {
		return Spec{Listing: ListingSpec{Format: FormatJSON, ItemLinks: expr, NextPage: next, MaxLinks: maxLinks},
			Item: ItemSpec{Format: FormatJSON}, Fields: []FieldSpec{{Name: "title", JSON: "title"}}}
	}
	return []Spec{
		cards("data.products", "", "next", 0),
		cards("data.products", "url", "data.pageInfo.hasNextPage && data.pageInfo.endCursor", 3),
		cards("products", "", "join('', ['/p?page=', to_string(page)])", 0),
		cards("@", "url", "", 0),
		cards("[*]", "", "", 0),
		cards("items[]", "", "next", 2),
		cards("data.products[*]", "", "links.next", 0),
		cards("data.products.edges[].node", "", "data.products.pageInfo.endCursor", 0),
		cards("data.products[*].{name: title, id: id, price: price * `2`}", "", "next", 0),
		cards("data.products[].merge(@, {name: upper(title)})", "", "", 0),
		cards("products[].variants", "", "", 0),
		links("data.products[].url", "next", 0),
		links("items[*].link", "next", 2),
		links("urls", "next", 0),
		links("[].url", "", 0),
		links("data.products[].join('', ['/p/', to_string(id)])", "next", 0),
		// Read as a tree: next_page reads the array, or a path that
		// does not stream.
		cards("data.products", "", "data.products[-1].next", 0),
		cards("data.products", "", "length(data)", 0),
		cards("data.products[?price > `2`]", "", "next", 0),
		links("data.products[].url", "$.next", 0),
		links("items[].links[].url", "next", 0),
	}
}

// streamDocs are JSON documents of the shapes listing APIs send, and odd
// ones: duplicate names at every level, values of the wrong kind, nulls,
// nested arrays, escapes, numbers beyond float64.
var streamDocs = []string{
	`{"data": {"products": [{"id": 1, "title": "Caf\u00e9", "price": 1.50, "url": "\/p\/1", "variants": [{"sku": "a", "stock": 2}, {"sku": "b", "stock": 3}]},
		{"id": 2, "title": "Tea", "price": "2", "url": "/p/2"}, null, "x", [1], {"id": 3}],
		"pageInfo": {"hasNextPage": true, "endCursor": "c3"}}, "next": "/p?page=2", "links": {"next": "/l/2"}}`,
	`{"data": {"products": [], "pageInfo": {"hasNextPage": false}}, "next": null}`,
	`{"data": {"products": null}, "next": "/n"}`,
	`{"data": {"products": {"id": 9, "title": "one", "url": "/p/9"}}, "next": "/n"}`,
	`{"data": {"products": "just text"}, "next": "/n"}`,
	`{"data": [{"products": [{"id": 1, "title": "a"}]}], "next": "/n"}`,
	`{"data": {"products": [{"id": 1, "title": "first"}]}, "data": {"products": [{"id": 2, "title": "second"}]}}`,
	`{"data": {"products": [{"id": 1, "title": "first"}]}, "data": {"other": 1}, "next": "/n"}`,
	`{"data": {"products": [{"id": 1, "title": "first"}], "products": null}}`,
	`{"data": {"products": [{"id": 1, "title": "a", "title": "b"}], "pageInfo": {"endCursor": "x"}, "pageInfo": {"endCursor": "y"}}}`,
	`{"next": "/n", "next": "/m", "products": [{"id": 1, "name": "n", "price": 123456789012345678901234567890}], "page": 3}`,
	`{"items": [[{"id": 1, "title": "nested"}, null], {"id": 2, "title": "flat"}, [], null, 5], "next": "/n"}`,
	`{"items": [{"link": "/a"}, {"link": "/b#x"}, {"link": 7}, {}, {"link": "/a"}, {"link": "javascript:x"}, {"link": "/c"}], "next": "/n"}`,
	`{"urls": ["/a", "/b", 3, null, "/c"], "next": "/n"}`,
	`{"urls": "/only", "next": "/n"}`,
	`[{"id": 1, "title": "root", "url": "/r/1"}, {"id": 2, "title": "root2"}]`,
	`[[{"id": 1, "title": "a"}], {"id": 2, "title": "b"}]`,
	`{"id": 5, "title": "a whole object", "url": "/w"}`,
	`"a string"`,
	`42`,
	`null`,
	`{"data": {"products": {"edges": [{"node": {"id": 1, "title": "edge"}}, {"node": null}, {"cursor": "x"}], "pageInfo": {"endCursor": "e1"}}}}`,
	`{"products": [{"id": 1, "title": "t", "variants": [{"sku": "s1", "stock": 1}]}, {"id": 2, "title": "u", "variants": "none"}]}`,
	`{"products": [{"id": 1, "title": "t", "variants": [{"sku": "s1"}]}], "page": "seven"}`,
	"\xef\xbb\xbf{\"data\": {\"products\": [{\"id\": 1, \"title\": \"bom\"}]}}",
	` { "data" : { "products" : [ { "id" : 1 , "title" : "spaced" } ] } } ` + "\n",
	// Not JSON: every reader must fail on them.
	``,
	`   `,
	`{"data": {"products": [{"id": 1, "title": "cut"}`,
	`{"data": {"products": [{"id": 1, "title": "a"},]}}`,
	`{"data": {"products": [{"id": 1}]}} trailing`,
	`{"data": {"products": [{"id": 1}]}}{}`,
	`{"data": {"products": [1 2]}}`,
	`{"next": "/n", "x": [1, 2,, 3], "data": {"products": []}}`,
	`{"data": {"products": [{"id": 01}]}}`,
	`<html><body>Service unavailable</body></html>`,
	`]`,
}

// readBoth reads body as a tree and one element at a time.
func readBoth(t testing.TB, x *Extractor, body []byte) (tree, stream Listing, treeErr, streamErr error) {
	t.Helper()
	page := mustURL(t, "https://shop.example/api/products?page=1")
	stream, streamErr = x.ReadListingJSON(body, page)
	doc, treeErr := x.ParseJSON(body)
	if treeErr == nil {
		tree = x.ListingJSON(doc, page)
	}
	return tree, stream, treeErr, streamErr
}

// sameListing fails unless the tree's and the stream's listings (and
// failures) are the same.
func sameListing(t testing.TB, what string, tree, stream Listing, treeErr, streamErr error) {
	t.Helper()
	if (treeErr == nil) != (streamErr == nil) {
		t.Fatalf("%s: tree error %v, stream error %v", what, treeErr, streamErr)
	}
	if !reflect.DeepEqual(tree, stream) {
		t.Fatalf("%s:\ntree   %s\nstream %s", what, showListing(tree), showListing(stream))
	}
}

func showListing(l Listing) string {
	var b strings.Builder
	fmt.Fprintf(&b, "links %q next %q dropped %d notes %v", l.ItemLinks, l.NextPages, l.Dropped, l.Notes)
	for _, it := range l.Items {
		fmt.Fprintf(&b, "\n  item %s %s %#v %q %q", it.Key, it.URL, it.Values, it.Reasons, it.Why)
	}
	for _, u := range l.Unusable {
		fmt.Fprintf(&b, "\n  unusable %s %v", u.URL, u.Err)
	}
	return b.String()
}

// TestReadListingJSONMatchesTree: reading one element at a time gives
// exactly what the tree of the whole document gives, for every listing
// and document.
func TestReadListingJSONMatchesTree(t *testing.T) {
	for i, spec := range streamSpecs() {
		x := mustCompile(t, spec)
		for j, doc := range streamDocs {
			tree, stream, treeErr, streamErr := readBoth(t, x, []byte(doc))
			sameListing(t, fmt.Sprintf("spec %d (%q %q), doc %d", i, spec.Listing.Items, spec.Listing.ItemLinks, j), tree, stream, treeErr, streamErr)
		}
	}
}

// TestReadListingJSONStreams: which listings are read one element at a
// time.
func TestReadListingJSONStreams(t *testing.T) {
	specs := streamSpecs()
	for i, spec := range specs {
		x := mustCompile(t, spec)
		want := i < len(specs)-5
		if got := x.streamedJSON() != nil; got != want {
			t.Errorf("spec %d (items %q, item_links %q, next_page %q): streamed %v, want %v",
				i, spec.Listing.Items, spec.Listing.ItemLinks, spec.Listing.NextPage, got, want)
		}
	}
}

func FuzzReadListingJSON(f *testing.F) {
	for _, doc := range streamDocs {
		f.Add([]byte(doc))
	}
	var xs []*Extractor
	for _, spec := range streamSpecs() {
		xs = append(xs, mustCompile(f, spec))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for i, x := range xs {
			tree, stream, treeErr, streamErr := readBoth(t, x, body)
			sameListing(t, fmt.Sprintf("spec %d", i), tree, stream, treeErr, streamErr)
		}
	})
}

// TestReadListingJSONDepth: a value read on its own nests no deeper than
// its place in the document allows (encoding/json's 10,000 levels), in
// every place the stream reads or skips one: the document is not JSON to
// both readers alike.
func TestReadListingJSONDepth(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, depth := range []int{9999, 10000, 10001} {
		for _, doc := range []string{
			`{"data": {"products": [` + nest(depth-3) + `]}}`,           // an element
			`{"data": {"products": [{"a": ` + nest(depth-4) + `}]}}`,    // inside an element
			`{"data": {"products": [], "x": ` + nest(depth-2) + `}}`,    // a sibling on the way
			`{"data": {"products": []}, "x": [` + nest(depth-2) + `]}`,  // skipped at the top
			`{"data": {"products": []}, "next": ` + nest(depth-1) + `}`, // kept for next_page
			`{"data": {"products": {"a": ` + nest(depth-3) + `}}}`,      // a member of a plain value
			`{"data": [` + nest(depth-2) + `]}`,                         // an array on the way
			`{"items": [{"variants": [` + nest(depth-4) + `]}]}`,        // flattened
		} {
			for i, spec := range streamSpecs()[:8] {
				x := mustCompile(t, spec)
				tree, stream, treeErr, streamErr := readBoth(t, x, []byte(doc))
				sameListing(t, fmt.Sprintf("depth %d, spec %d, %.40s", depth, i, doc), tree, stream, treeErr, streamErr)
				if (treeErr != nil) != (depth > 10000) {
					t.Fatalf("depth %d, %.40s: error %v", depth, doc, treeErr)
				}
			}
		}
	}
}
