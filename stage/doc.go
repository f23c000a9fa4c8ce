// Package stage runs one config end to end: it takes the storage lock,
// wires the crawl engine to HTTP, bbolt state and extraction, decides the
// verdict, and writes .last_run.json. Run is the Go API of databrew-stage.
package stage
