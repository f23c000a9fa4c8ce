// Package stage runs one config end to end, and commits a logical run of
// shards: it takes the storage lock, wires the crawl engine to HTTP (and,
// for the page kinds [render] names, to headless Chromium through package
// render), bbolt state and extraction, decides the verdict, opens the
// output as a publish.Output (a local folder, or object storage proved
// usable by its preflight) or, in a binary built with -tags iceberg, an
// Iceberg table (publish/iceberg; its shards' control files in a folder
// or bucket prefix under the table's location), hands the run's pending
// versions to package publish, which holds the publish protocol, and
// writes .last_run.json.
// Run and Commit are the Go API of databrew-stage; AdviseHeap, which a
// program calls before Run, tunes the process's heap for the runs its
// configs' states foretell (huge pages for a rerun of a small state).
package stage
