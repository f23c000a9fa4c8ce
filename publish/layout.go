package publish

import (
	"regexp"
	"strings"
	"time"

	"github.com/databrew/databrew-stage/sink"
)

// ShardsFolder is the folder of an export root that holds the control
// files of logical runs made of shards: ShardsFolder/run=ID/ holds the
// run's claim (_run.json), each shard's manifest, and the decision. The
// leading "." hides it from dataset readers.
const ShardsFolder = ".databrew-shards"

// RunPath is the key of the run folder a run publishes into:
// dt=YYYY-MM-DD/run=ID, the day in UTC.
func RunPath(day time.Time, runID string) string { return sink.RunPath(day, runID) }

// controlPath is a logical run's control file's key.
func controlPath(runID, name string) string { return ShardsFolder + "/run=" + runID + "/" + name }

// ShardFolder is a shard's folder in its run folder: "shard=2-of-4".
func ShardFolder(shard string) string { return "shard=" + shard }

// partsPrefix is where a publication's parts are staged: its run folder,
// or for a shard's attempt its shard's folder there, each part named for
// the attempt, so two attempts of a shard never stage the same key.
func partsPrefix(runPath, shard, attempt string) string {
	if shard == "" {
		return runPath + "/"
	}
	return runPath + "/" + ShardFolder(shard) + "/" + attempt + "-"
}

// ownKey matches the keys the protocol writes, relative to the output's
// root: a run folder's part files (a run of the whole config's, or a
// shard attempt's in its shard folder) and its _verdict.json,
// _manifest.json and _SUCCESS; the shards' control files; the output's
// _verdict.json. Nothing else is the stage's: a bucket is shared, and at
// its root every other application's uploads are under the output too.
// A run id's length is checked apart (runIDsFit): a counted repetition
// such as {1,128} compiles to 128 copies of its class, heap that every
// process would hold.
var ownKey = regexp.MustCompile(`^(?:` +
	`dt=\d{4}-\d{2}-\d{2}/run=[A-Za-z0-9._-]+/(?:` +
	`part-\d{5,}` + extensions + `|` +
	`shard=\d+-of-\d+/[0-9a-f]+-part-\d{5,}` + extensions + `|` +
	regexp.QuoteMeta(sink.VerdictFile) + `|` + regexp.QuoteMeta(sink.ManifestFile) + `|` + regexp.QuoteMeta(sink.SuccessFile) + `)` +
	`|` + regexp.QuoteMeta(ShardsFolder) + `/run=[A-Za-z0-9._-]+/[^/]+(?:/[^/]+)*` +
	`|` + regexp.QuoteMeta(sink.VerdictFile) +
	`)$`)

// maxRunID is the longest run id the protocol writes, in bytes (the
// stage refuses longer ones).
const maxRunID = 128

// extensions matches the part files' extensions.
var extensions = `(?:` + regexp.QuoteMeta(sink.FormatParquet.Ext()) + `|` + regexp.QuoteMeta(sink.FormatArrow.Ext()) + `)`

// OwnKey reports whether key, relative to the output's root, is one the
// protocol could have written: only such staged parts are ever aborted.
func OwnKey(key string) bool { return ownKey.MatchString(key) && runIDsFit(key) }

// runIDsFit reports whether the run id a key ownKey matches names, in its
// second segment (dt=DATE/run=ID/... or .databrew-shards/run=ID/...), is
// at most maxRunID bytes long.
func runIDsFit(key string) bool {
	_, rest, _ := strings.Cut(key, "/")
	id, _, _ := strings.Cut(strings.TrimPrefix(rest, "run="), "/")
	return len(id) <= maxRunID
}

// ownStaged accepts the staged parts the protocol could have left under
// prefix.
func ownStaged(prefix string) func(Staged) bool {
	return func(s Staged) bool { return strings.HasPrefix(s.Key, prefix) && OwnKey(s.Key) }
}

// ownPrefixes are the prefixes the protocol writes under, so a sweep of
// an output at a busy bucket's root does not list every upload there.
var ownPrefixes = []string{"dt=", ShardsFolder + "/", sink.VerdictFile}
