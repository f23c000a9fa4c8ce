package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/databrew/databrew-stage/verdict"
)

// seconds is t as the Unix time a textfile holds.
func seconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1e3 }

// TestMetricsOfSuccessRun: every value of a successful run is in the file,
// under its name and labels, as a documented gauge.
func TestMetricsOfSuccessRun(t *testing.T) {
	finished := clock.Add(250 * time.Millisecond)
	tf := writeAndRead(t, textfilePath(t), successRun("books", finished))

	tf.want(t, "databrew_stage_last_run_requests", cfg("books"), 40)
	tf.want(t, "databrew_stage_last_run_retried_requests", cfg("books"), 4)
	tf.want(t, "databrew_stage_last_run_not_modified_requests", cfg("books"), 7)
	for result, n := range map[string]float64{"ok": 33, "neutral": 2, "failed": 1, "robots_excluded": 3} {
		tf.want(t, "databrew_stage_last_run_urls", with("books", "result", result), n)
	}
	for change, n := range map[string]float64{"new": 12, "changed": 3, "unchanged": 15, "removed": 2, "skipped": 5, "duplicate_keys": 1} {
		tf.want(t, "databrew_stage_last_run_items", with("books", "change", change), n)
	}
	tf.want(t, "databrew_stage_last_run_duration_seconds", cfg("books"), 90.5)
	tf.want(t, "databrew_stage_last_run_breaker_trips", cfg("books"), 2)
	tf.want(t, "databrew_stage_last_run_exported_rows", cfg("books"), 17)
	tf.want(t, "databrew_stage_last_run_export_failed", cfg("books"), 0)
	tf.want(t, "databrew_stage_last_run_coverage_gaps", cfg("books"), 1)
	tf.want(t, "databrew_stage_last_run_outcome", with("books", "outcome", "success"), 1)
	tf.want(t, "databrew_stage_last_run_outcome", with("books", "outcome", "partial"), 0)
	tf.want(t, "databrew_stage_last_run_outcome", with("books", "outcome", "failed"), 0)
	tf.want(t, "databrew_stage_last_run_info", map[string]string{"config": "books", "stop": "queue_empty", "started": "true"}, 1)
	tf.want(t, "databrew_stage_last_run_timestamp_seconds", cfg("books"), seconds(finished))
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"), seconds(finished))

	if len(tf) != 14 {
		t.Errorf("%d metric families, want 14", len(tf))
	}
	for name, family := range tf {
		if !strings.HasPrefix(name, "databrew_stage_") || family.GetType() != dto.MetricType_GAUGE || family.GetHelp() == "" {
			t.Errorf("%s: type %s, help %q; want a databrew_stage_ gauge with HELP", name, family.GetType(), family.GetHelp())
		}
		for _, sample := range family.GetMetric() {
			if labelsOf(sample)["config"] != "books" {
				t.Errorf("%s: a sample without config=books: %v", name, labelsOf(sample))
			}
		}
	}
}

// TestMetricsOfFailedRun: a failed run says so, and a first run that fails
// has no last success at all.
func TestMetricsOfFailedRun(t *testing.T) {
	tf := writeAndRead(t, textfilePath(t), failedRun("books", clock))

	tf.want(t, "databrew_stage_last_run_outcome", with("books", "outcome", "failed"), 1)
	tf.want(t, "databrew_stage_last_run_outcome", with("books", "outcome", "success"), 0)
	tf.want(t, "databrew_stage_last_run_outcome", with("books", "outcome", "partial"), 0)
	tf.want(t, "databrew_stage_last_run_requests", cfg("books"), 6)
	tf.want(t, "databrew_stage_last_run_urls", with("books", "result", "ok"), 0)
	tf.want(t, "databrew_stage_last_run_urls", with("books", "result", "failed"), 1)
	tf.want(t, "databrew_stage_last_run_exported_rows", cfg("books"), 0)
	tf.want(t, "databrew_stage_last_run_duration_seconds", cfg("books"), 2)
	tf.want(t, "databrew_stage_last_run_timestamp_seconds", cfg("books"), seconds(clock))
	tf.wantAbsent(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"))
}

// TestLastSuccessSurvivesFailedRun: success at T1, failed at T2: the last
// success stays T1 while the last run moves to T2; success at T3 moves both.
func TestLastSuccessSurvivesFailedRun(t *testing.T) {
	path := textfilePath(t)
	t1, t2, t3 := clock, clock.Add(24*time.Hour), clock.Add(48*time.Hour+time.Second)

	tf := writeAndRead(t, path, successRun("books", t1))
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"), seconds(t1))

	tf = writeAndRead(t, path, failedRun("books", t2))
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"), seconds(t1))
	tf.want(t, "databrew_stage_last_run_timestamp_seconds", cfg("books"), seconds(t2))
	tf.want(t, "databrew_stage_last_run_outcome", with("books", "outcome", "failed"), 1)

	tf = writeAndRead(t, path, successRun("books", t3))
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"), seconds(t3))
	tf.want(t, "databrew_stage_last_run_timestamp_seconds", cfg("books"), seconds(t3))
}

// TestRunNotStartedKeepsLastSuccess: a config a deadline never started, or
// whose storage was locked, leaves its last success where it was.
func TestRunNotStartedKeepsLastSuccess(t *testing.T) {
	for _, notStarted := range []verdict.RunReport{
		verdict.NotStarted("books", clock.Add(time.Hour)),
		verdict.Locked("books", clock.Add(time.Hour), "storage state/books is in use by another process"),
	} {
		t.Run(string(notStarted.Stop), func(t *testing.T) {
			path := textfilePath(t)
			writeAndRead(t, path, successRun("books", clock))
			tf := writeAndRead(t, path, notStarted)
			tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"), seconds(clock))
			tf.want(t, "databrew_stage_last_run_timestamp_seconds", cfg("books"), seconds(clock.Add(time.Hour)))
			tf.want(t, "databrew_stage_last_run_info", map[string]string{"config": "books", "stop": string(notStarted.Stop), "started": "false"}, 1)
		})
	}
}

// TestNotStartedRunThatWouldSucceedKeepsLastSuccess: only a run that
// started moves the last success, whatever its outcome says.
func TestNotStartedRunThatWouldSucceedKeepsLastSuccess(t *testing.T) {
	path := textfilePath(t)
	writeAndRead(t, path, successRun("books", clock))
	odd := successRun("books", clock.Add(time.Hour))
	odd.Started = false
	tf := writeAndRead(t, path, odd)
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"), seconds(clock))
}

// TestPartialRunMovesLastSuccess: partial is not failed.
func TestPartialRunMovesLastSuccess(t *testing.T) {
	path := textfilePath(t)
	writeAndRead(t, path, successRun("books", clock))
	partial := successRun("books", clock.Add(time.Hour))
	partial.Outcome, partial.Stop = verdict.OutcomePartial, verdict.StopInterrupted
	tf := writeAndRead(t, path, partial)
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"), seconds(clock.Add(time.Hour)))
	tf.want(t, "databrew_stage_last_run_outcome", with("books", "outcome", "partial"), 1)
}

// TestConfigsNotRunAreKept: a config the file holds that this invocation
// did not run keeps every metric; the ones run this time are replaced.
func TestConfigsNotRunAreKept(t *testing.T) {
	path := textfilePath(t)
	writeAndRead(t, path, successRun("books", clock), failedRun("shoes", clock))
	later := clock.Add(time.Hour)
	rerun := successRun("shoes", later)
	rerun.Requests.Total = 33
	tf := writeAndRead(t, path, rerun)

	tf.want(t, "databrew_stage_last_run_requests", cfg("books"), 40)
	tf.want(t, "databrew_stage_last_run_items", with("books", "change", "new"), 12)
	tf.want(t, "databrew_stage_last_run_info", map[string]string{"config": "books", "stop": "queue_empty", "started": "true"}, 1)
	tf.want(t, "databrew_stage_last_run_timestamp_seconds", cfg("books"), seconds(clock))
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"), seconds(clock))

	tf.want(t, "databrew_stage_last_run_requests", cfg("shoes"), 33)
	tf.want(t, "databrew_stage_last_run_outcome", with("shoes", "outcome", "failed"), 0)
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("shoes"), seconds(later))
}

// TestConfigRunTwiceKeepsOneInfoSeries: the last of two runs of one config
// in an invocation sets its stop; the earlier success still counts.
func TestConfigRunTwiceKeepsOneInfoSeries(t *testing.T) {
	interrupted := failedRun("books", clock.Add(time.Minute))
	interrupted.Stop = verdict.StopInterrupted
	tf := writeAndRead(t, textfilePath(t), successRun("books", clock), interrupted)
	if n := len(tf["databrew_stage_last_run_info"].GetMetric()); n != 1 {
		t.Errorf("%d info samples, want 1", n)
	}
	tf.want(t, "databrew_stage_last_run_info", map[string]string{"config": "books", "stop": "interrupted", "started": "true"}, 1)
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"), seconds(clock))
}

// TestUnknownPreviousMetricsAreDropped: metrics this version does not
// write, or writes with other labels, do not survive a rewrite.
func TestUnknownPreviousMetricsAreDropped(t *testing.T) {
	path := textfilePath(t)
	old := "# TYPE databrew_stage_gone gauge\ndatabrew_stage_gone{config=\"hats\"} 3\n" +
		"# TYPE databrew_stage_last_run_requests gauge\ndatabrew_stage_last_run_requests{config=\"hats\",host=\"a\"} 5\n" +
		"# TYPE databrew_stage_last_success_timestamp_seconds gauge\ndatabrew_stage_last_success_timestamp_seconds{config=\"hats\"} 1.5e+09\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	tf := writeAndRead(t, path, successRun("books", clock))
	if _, ok := tf["databrew_stage_gone"]; ok {
		t.Error("databrew_stage_gone was carried over")
	}
	tf.wantAbsent(t, "databrew_stage_last_run_requests", map[string]string{"config": "hats", "host": "a"})
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("hats"), 1.5e9)
}

// TestUnreadablePreviousFileIsAnError: a file that is not a textfile is
// neither overwritten nor silently dropped; the error names it.
func TestUnreadablePreviousFileIsAnError(t *testing.T) {
	path := textfilePath(t)
	const garbage = "this is { not a textfile\n"
	if err := os.WriteFile(path, []byte(garbage), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteTextfile(path, []verdict.RunReport{successRun("books", clock)})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("WriteTextfile = %v, want an error naming %s", err, path)
	}
	if b, _ := os.ReadFile(path); string(b) != garbage {
		t.Errorf("the file was changed to %q", b)
	}
}

// TestWriteLeavesOnlyTheTextfile: the temporary file of the atomic write
// is renamed into place, not left beside it; a folder that does not exist
// is an error that names the file.
func TestWriteLeavesOnlyTheTextfile(t *testing.T) {
	path := textfilePath(t)
	writeAndRead(t, path, successRun("books", clock))
	writeAndRead(t, path, failedRun("books", clock.Add(time.Hour)))
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != filepath.Base(path) {
		t.Errorf("folder holds %v, want only %s", entries, filepath.Base(path))
	}

	missing := filepath.Join(t.TempDir(), "no-such-folder", "databrew-stage.prom")
	err = WriteTextfile(missing, []verdict.RunReport{successRun("books", clock)})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("WriteTextfile into a missing folder = %v, want an error naming %s", err, missing)
	}
}

// shardRun is the verdict of shard name (such as "0-of-2") of the
// logical run r1 of config, which staged 15 rows for the commit.
func shardRun(config, name string, finished time.Time) verdict.RunReport {
	rep := successRun(config, finished)
	rep.Shard = name
	rep.Export = verdict.Export{Staged: true, Rows: 15, Path: "out", Files: []string{"a.parquet"}}
	return rep
}

// shardOf is the label set of config's shard name.
func shardOf(config, name string) map[string]string {
	return map[string]string{"config": config, "shard": name}
}

// TestShardRunsCarryTheShardLabel: every sample of a shard's run carries
// the shard beside the config, and a whole run's (a logical run's, which
// its commit writes) carries no shard, not even an empty one, in one file
// the Prometheus text parser reads. A shard publishes nothing itself: its
// exported rows are 0, though it staged some.
func TestShardRunsCarryTheShardLabel(t *testing.T) {
	path := textfilePath(t)
	logical := successRun("books", clock.Add(time.Minute))
	logical.Shards = []verdict.RunReport{shardRun("books", "0-of-2", clock), shardRun("books", "1-of-2", clock)}
	tf := writeAndRead(t, path, shardRun("books", "0-of-2", clock), shardRun("books", "1-of-2", clock), logical)

	for _, shard := range []string{"0-of-2", "1-of-2"} {
		tf.want(t, "databrew_stage_last_run_requests", shardOf("books", shard), 40)
		tf.want(t, "databrew_stage_last_run_exported_rows", shardOf("books", shard), 0)
		tf.want(t, "databrew_stage_last_run_outcome", map[string]string{"config": "books", "shard": shard, "outcome": "success"}, 1)
		tf.want(t, "databrew_stage_last_run_info", map[string]string{"config": "books", "shard": shard, "stop": "queue_empty", "started": "true"}, 1)
		tf.want(t, "databrew_stage_last_success_timestamp_seconds", shardOf("books", shard), seconds(clock))
	}
	tf.want(t, "databrew_stage_last_run_requests", cfg("books"), 40)
	tf.want(t, "databrew_stage_last_run_exported_rows", cfg("books"), 17)
	tf.want(t, "databrew_stage_last_run_outcome", with("books", "outcome", "success"), 1)
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"), seconds(clock.Add(time.Minute)))

	if len(tf) != 14 {
		t.Errorf("%d metric families, want 14", len(tf))
	}
	for name, family := range tf {
		whole, shards := 0, 0
		for _, sample := range family.GetMetric() {
			labels := labelsOf(sample)
			shard, ok := labels["shard"]
			switch {
			case !ok:
				whole++
			case shard == "0-of-2" || shard == "1-of-2":
				shards++
			default:
				t.Errorf("%s: a sample with shard %q: %v", name, shard, labels)
			}
		}
		if whole == 0 || shards != 2*whole {
			t.Errorf("%s: %d samples of the whole run and %d of shards, want some and twice as many", name, whole, shards)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `shard=""`) {
		t.Errorf("a sample carries an empty shard label:\n%s", b)
	}
}

// TestShardsAndWholeRunsAreKeptApart: in one file, a shard's run replaces
// that shard's metrics only, keeping the other shards' and the logical
// run's; a commit (the logical run's metrics) keeps every shard's; a
// failed shard keeps that shard's last success.
func TestShardsAndWholeRunsAreKeptApart(t *testing.T) {
	path := textfilePath(t)
	writeAndRead(t, path, successRun("books", clock), shardRun("books", "0-of-2", clock), shardRun("books", "1-of-2", clock))

	later := clock.Add(time.Hour)
	failed := failedRun("books", later)
	failed.Shard = "1-of-2"
	tf := writeAndRead(t, path, failed)
	tf.want(t, "databrew_stage_last_run_outcome", map[string]string{"config": "books", "shard": "1-of-2", "outcome": "failed"}, 1)
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", shardOf("books", "1-of-2"), seconds(clock))
	tf.want(t, "databrew_stage_last_run_timestamp_seconds", shardOf("books", "1-of-2"), seconds(later))
	tf.want(t, "databrew_stage_last_run_outcome", map[string]string{"config": "books", "shard": "0-of-2", "outcome": "success"}, 1)
	tf.want(t, "databrew_stage_last_run_outcome", with("books", "outcome", "success"), 1)
	tf.want(t, "databrew_stage_last_run_timestamp_seconds", cfg("books"), seconds(clock))

	committed := failedRun("books", later.Add(time.Minute))
	tf = writeAndRead(t, path, committed)
	tf.want(t, "databrew_stage_last_run_outcome", with("books", "outcome", "failed"), 1)
	tf.want(t, "databrew_stage_last_success_timestamp_seconds", cfg("books"), seconds(clock))
	tf.want(t, "databrew_stage_last_run_timestamp_seconds", shardOf("books", "1-of-2"), seconds(later))
	tf.want(t, "databrew_stage_last_run_timestamp_seconds", shardOf("books", "0-of-2"), seconds(clock))
	if n := len(tf["databrew_stage_last_run_info"].GetMetric()); n != 3 {
		t.Errorf("%d info samples, want 3: the logical run's and each shard's", n)
	}
}
