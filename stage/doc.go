// Package stage runs one config end to end: it takes the storage lock,
// wires the crawl engine to HTTP (and, for the page kinds [render] names,
// to headless Chromium through package render), bbolt state and
// extraction, decides the verdict, and writes .last_run.json. Run is the
// Go API of databrew-stage.
//
// It also holds the publish protocol of the export, for now in three
// forms: into a local folder (export_folder.go), into object storage
// (export_object.go), and a shard's staged export with Commit, the job
// commit of a logical run of shards (export_shard.go, shard*.go,
// commit.go), each with its reconcile after a crash. Package publish
// holds the storage port these are moving onto.
package stage
