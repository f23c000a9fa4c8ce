// Package crawl is the crawl engine: it walks a catalog site from its start
// URLs through listing pages to item pages, classifies every URL's result,
// applies the stop rules, and hands each finished page's links and items to
// a Store in batches. A rerun's listing pages are requested ahead along
// the chain their memos remember (lookahead.go), within the run's
// concurrency.
//
// The engine depends only on the small interfaces it defines here — a
// Fetcher for one HTTP exchange, a Store for the queue and the items, a
// PageReader per kind of page (HTML, JSON, sitemaps: package pages), a
// Robots and a Pacer for politeness, a Clock — so tests and adapters plug
// in real implementations without the engine knowing them.
package crawl
