package extract

import (
	"fmt"
	"reflect"
	"testing"
)

// itemSpecs are JSON item pages whose fields read a few paths (read from
// a skeleton of the document), with rows and page fields, or that read
// the whole document or cannot be told (read as a tree).
func itemSpecs() []Spec {
	item := func(rows string, fields ...FieldSpec) Spec {
		key := ""
		if rows != "" {
			key = fields[0].Name
		}
		return Spec{Item: ItemSpec{Format: FormatJSON, Rows: rows}, Key: key, Fields: fields}
	}
	return []Spec{
		item("", FieldSpec{Name: "title", JSON: "data.products[0].title || title"}, FieldSpec{Name: "price", JSON: "price", Type: TypeFloat64},
			FieldSpec{Name: "stock", JSON: "sum(products[].variants[].stock)", Type: TypeInt64}, FieldSpec{Name: "next", JSON: "next", URL: true}),
		item("products", FieldSpec{Name: "id", JSON: "id", Type: TypeInt64}, FieldSpec{Name: "name", JSON: "name || title"},
			FieldSpec{Name: "page", JSON: "page", Scope: ScopePage}, FieldSpec{Name: "next", JSON: "next", Scope: ScopePage}),
		item("data.products.edges[].node", FieldSpec{Name: "title", JSON: "title", Required: true}, FieldSpec{Name: "cursor", JSON: "data.products.pageInfo.endCursor", Scope: ScopePage}),
		item("", FieldSpec{Name: "literal", JSON: "`\"x\"`"}),
		item("", FieldSpec{Name: "all", JSON: "@", Multiple: true}),
		item("", FieldSpec{Name: "keys", JSON: "sort(keys(@))", Multiple: true}),
		item("", FieldSpec{Name: "root", JSON: "$.next"}),
	}
}

// TestReadItemsJSONMatchesTree: an item page read from a skeleton of the
// paths its fields read gives what the tree of the whole document gives.
func TestReadItemsJSONMatchesTree(t *testing.T) {
	for i, spec := range itemSpecs() {
		x := mustCompile(t, spec)
		for j, doc := range append(streamDocs, readDocs...) {
			checkItemsJSON(t, fmt.Sprintf("spec %d, doc %d", i, j), x, []byte(doc))
		}
	}
}

// TestReadItemsJSONReadsSkeletons: which item pages are read from a
// skeleton.
func TestReadItemsJSONReadsSkeletons(t *testing.T) {
	for i, spec := range itemSpecs() {
		_, got := mustCompile(t, spec).itemReads()
		if want := i < len(itemSpecs())-1; got != want {
			t.Errorf("spec %d: skeleton %v, want %v", i, got, want)
		}
	}
}

func FuzzReadItemsJSON(f *testing.F) {
	for _, doc := range append(streamDocs, readDocs...) {
		f.Add([]byte(doc))
	}
	var xs []*Extractor
	for _, spec := range itemSpecs() {
		xs = append(xs, mustCompile(f, spec))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for i, x := range xs {
			checkItemsJSON(t, fmt.Sprintf("spec %d", i), x, body)
		}
	})
}

func checkItemsJSON(t *testing.T, what string, x *Extractor, body []byte) {
	t.Helper()
	page := mustURL(t, "https://shop.example/api/products/1")
	items, unusable, err := x.ReadItemsJSON(body, page)
	doc, treeErr := x.ParseJSON(body)
	if (err == nil) != (treeErr == nil) {
		t.Fatalf("%s: skeleton error %v, tree error %v", what, err, treeErr)
	}
	if err != nil {
		return
	}
	wantItems, wantUnusable := x.ItemsJSON(doc, page)
	if !reflect.DeepEqual(items, wantItems) || !reflect.DeepEqual(unusable, wantUnusable) {
		t.Fatalf("%s:\nskeleton %s\ntree     %s", what, showListing(Listing{Items: items, Unusable: unusable}), showListing(Listing{Items: wantItems, Unusable: wantUnusable}))
	}
}
