package metrics

import (
	"testing"
	"time"

	"github.com/databrew/databrew-stage/verdict"
)

// tableRun is a successful run of config into the Iceberg table
// shop.books that committed snapshot id (0: none).
func tableRun(config string, finished time.Time, id int64) verdict.RunReport {
	r := successRun(config, finished)
	r.Export.Path = "iceberg://shop.books (sqlite:///c.db)"
	r.Export.Table = &verdict.Table{Format: verdict.TableFormatIceberg, Name: "shop.books", Catalog: "sqlite:///c.db", SnapshotID: id}
	if id == 0 {
		r.Export = verdict.Export{Files: []string{}, Reason: "nothing new or changed to publish", Table: r.Export.Table}
	}
	return r
}

// tableInfo is the label set of the table info of config.
func tableInfo(config, snapshot string) map[string]string {
	return map[string]string{"config": config, "table": "shop.books", "format": "iceberg", "snapshot_id": snapshot}
}

// TestTableInfoNamesTheSnapshot: a run into a table names it and the
// snapshot it committed, in full (a label: no float64 holds a 64-bit id);
// a run that committed none says so with an empty snapshot_id and leaves
// no series of the earlier snapshot; another config's run keeps the
// series as it was; the last success is there as for any output.
func TestTableInfoNamesTheSnapshot(t *testing.T) {
	path := textfilePath(t)
	tf := writeAndRead(t, path, tableRun("books", clock, 7340955470153711426))
	tf.want(t, "databrew_stage_last_run_table_info", tableInfo("books", "7340955470153711426"), 1)
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"), seconds(clock))

	later := clock.Add(time.Hour)
	tf = writeAndRead(t, path, tableRun("books", later, 0))
	if n := len(tf["databrew_stage_last_run_table_info"].GetMetric()); n != 1 {
		t.Errorf("%d table info samples, want 1", n)
	}
	tf.want(t, "databrew_stage_last_run_table_info", tableInfo("books", ""), 1)
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"), seconds(later))
	tf = writeAndRead(t, path, successRun("shoes", later))
	tf.want(t, "databrew_stage_last_run_table_info", tableInfo("books", ""), 1)

	writeAndRead(t, path, tableRun("books", later, 42))
	tf = writeAndRead(t, path, successRun("shoes", later))
	tf.want(t, "databrew_stage_last_run_table_info", tableInfo("books", "42"), 1)
	if n := len(tf["databrew_stage_last_run_table_info"].GetMetric()); n != 1 {
		t.Errorf("%d table info samples, want books' alone: a folder output has none", n)
	}

	// The config's output is a folder again: no table info.
	tf = writeAndRead(t, path, successRun("books", later.Add(time.Hour)))
	if n := len(tf["databrew_stage_last_run_table_info"].GetMetric()); n != 0 {
		t.Errorf("%d table info samples after a run into a folder, want none", n)
	}
}

// TestTableRunTwiceKeepsOneTableSeries: a config run twice in one
// invocation keeps the table info of its last run alone.
func TestTableRunTwiceKeepsOneTableSeries(t *testing.T) {
	tf := writeAndRead(t, textfilePath(t), tableRun("books", clock, 42), tableRun("books", clock.Add(time.Minute), 0))
	if n := len(tf["databrew_stage_last_run_table_info"].GetMetric()); n != 1 {
		t.Errorf("%d table info samples, want 1", n)
	}
	tf.want(t, "databrew_stage_last_run_table_info", tableInfo("books", ""), 1)
}
