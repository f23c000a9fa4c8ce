// Package lineage describes stage runs as OpenLineage RunEvents (spec
// 2-0-2, https://openlineage.io/spec/2-0-2/OpenLineage.json) and delivers
// them over HTTP or to a JSON Lines file.
//
// A Tracker builds the events of one run: START before the run, then
// COMPLETE or FAIL from its verdict. The job is the config, the one output
// dataset is the config's export root, named by the OpenLineage naming
// conventions (https://openlineage.io/docs/spec/naming/); an Iceberg
// table is named as OpenLineage's Spark integration names one: by its
// location, with a symlinks facet giving its name in the catalog, and in
// COMPLETE the snapshot the run committed as the dataset's version. A logical run of
// shards is one OpenLineage run of the same job and dataset, whose id
// (LogicalRunID) every shard and the commit derive from the run id they
// share: each shard sends START and, when it ends, RUNNING, naming its
// shard in the databrew_stage facet; the commit sends the one COMPLETE or
// FAIL. An Emitter sends
// each event to every Transport; a transport that fails never stops the
// others, and never fails the run: the Emitter returns the errors and
// counts them.
package lineage
