// Package sink writes exported item versions into part files: Parquet
// (parquet-go) or Arrow IPC streams (arrow-go), in the column layout of the
// export — the config's fields in declared order, then the system columns.
//
// A FileSet streams rows into part-00000.<ext>, part-00001.<ext>, ... in one
// folder, bounded in rows per file and per row group or record batch, so
// memory does not grow with the number of rows written. It names the files
// of a run folder (RunPath, ManifestFile, SuccessFile, VerdictFile); package
// publish is what publishes them.
package sink
