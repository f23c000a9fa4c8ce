// Package pages holds the page formats the crawl engine reads: each is a
// crawl.PageReader for one kind of page in one format, built from a
// config's extraction spec. HTML listing and item pages are read with
// extract's compiled CSS selectors.
package pages
