// Package render loads pages in headless Chromium for the crawl engine:
// a Renderer is a crawl.Fetcher that opens each page in a tab of one
// browser per run and answers with the rendered DOM as the body, the
// document's status and headers, so the engine judges, reads and counts a
// rendered page as it does any page.
//
// Nothing leaves the browser unless the stage allows it: every request a
// page makes is paused by the DevTools protocol's Fetch domain and
// policed here — resource types the config blocks, hosts outside
// allowed_domains and URLs robots.txt disallows are failed before they are
// sent; the rest wait for the same per-host pacer as plain requests and
// carry the config's headers. Documents (the page, its frames) are
// requests; everything else is a subresource, counted apart.
//
// The browser runs in a process group of its own that dies with the stage
// (the parent-death signal), and Close kills the group. A browser that
// crashes or hangs is restarted once; after that Fetch answers with a
// fatal error that stops the run.
package render
