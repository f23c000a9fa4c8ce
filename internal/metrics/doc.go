// Package metrics writes the verdicts of a run invocation as a Prometheus
// textfile for node-exporter's textfile collector.
//
// Every metric is a gauge labelled with the config's name: a textfile is a
// snapshot, so each value is the one of the config's last run, never a
// counter that grows across runs. The one value that looks further back is
// databrew_stage_last_success_timestamp_seconds, which only a run that
// started and did not fail moves; it is carried over from the file already
// there when the config's run this time failed or did not start. Configs
// not run this time keep every metric the file held for them, so one file
// can serve invocations that run different configs.
//
// A config whose output is a table (an Iceberg table) also has
// databrew_stage_last_run_table_info, always 1, whose labels name the
// table, its format and the snapshot its last run committed (empty when
// it committed none): a label, since a float64 value holds no 64-bit
// snapshot id exactly.
//
// The run of one shard of a logical run (its verdict names the shard)
// writes the same metrics labelled with the shard too ("2-of-4"); a whole
// run, and a logical run as its commit combined it, carry no shard label.
// Each shard of a config is kept apart from the others and from the
// config's whole or logical run, as configs are from one another, so a
// shard writing the file leaves the commit's metrics as they were, and the
// other way round. A shard publishes nothing itself: its exported rows are
// 0, and the commit's are the logical run's.
//
// The file is replaced atomically (a temporary file in the same folder,
// then a rename), so the collector never reads half of it.
package metrics
