// Package extract turns pages into typed items: HTML with CSS selectors,
// JSON-LD and JSON in elements, and JSON documents with JMESPath.
//
// A Spec is checked and compiled once by Compile; the resulting Extractor
// holds compiled selectors, expressions and regular expressions and is
// safe for concurrent use. Per page, Parse (HTML) or ParseJSON builds a
// document once (ParseTransient for a caller that releases an HTML
// document when it has read it, whose nodes the next page reuses); Listing or ListingJSON reads the links (and optionally
// item cards) of a listing page, and Items or ItemsJSON reads the items of
// an item page: one, or one per row. Item is Items for a page of one item.
// ReadListingJSON reads a JSON listing page from its body, one card at a
// time where its expressions allow, with ListingJSON's result;
// ReadItemsJSON reads a JSON item page decoding only what its fields read
// where that is known, with ItemsJSON's.
package extract
