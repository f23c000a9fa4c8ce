// Package iceberg publishes an export as an Apache Iceberg table (the
// output iceberg://NAMESPACE.TABLE): each logical run is one append
// snapshot whose summary holds databrew.run-id, so a reader of the table
// sees the whole run or none of it.
//
// Open connects to the catalog (the SQL catalog on SQLite or PostgreSQL,
// or a REST catalog), creates the namespace and the table on the first
// run and adds the config's new fields as columns later. The table's
// columns are the config's fields, then the stage's own _key, _change,
// _url, _run_id and _seen_at (timestamptz), partitioned by day(_seen_at).
//
// Publishing follows the stage's protocol in two steps: Stage writes the
// run's rows as Parquet data files that no snapshot references yet
// (invisible to readers), Pending.Commit adds them in one catalog commit.
// FindRun tells after a crash whether a run's snapshot exists; RemoveRun
// deletes the data files of a run that will never commit (their names
// carry RunUUID), RemoveOrphans any unreferenced data file once old.
// For the shards of a logical run, Pending.Staged describes a writer's
// data files and CommitStaged adds several writers' in one snapshot;
// their control files go under the table's location (ControlOutput).
//
// The warehouse is a local folder or an S3 prefix (ParseWarehouse): the
// files go through iceberg-go's S3 IO, configured by the catalog's
// properties, so every table the catalog creates or loads reaches them.
// The package is written with github.com/apache/iceberg-go.
package iceberg
