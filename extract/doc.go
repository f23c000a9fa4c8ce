// Package extract turns HTML pages into typed items with CSS selectors.
//
// A Spec is checked and compiled once by Compile; the resulting Extractor
// holds compiled selectors and regular expressions and is safe for
// concurrent use. Per page, Parse builds a document once, Listing reads the
// links (and optionally item cards) of a listing page, and Item reads the
// fields of an item page.
package extract
