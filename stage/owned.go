package stage

import (
	"context"
	"regexp"
	"time"

	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/sink"
)

// The keys the stage's protocol writes in object storage, relative to
// the output's prefix: a run folder's part files (a whole-config run's,
// or a shard attempt's in its shard folder) and its _verdict.json,
// _manifest.json and _SUCCESS; the shards' control files; the output's
// _verdict.json. (Preflight's probes are objstore's to know.) Nothing
// else is the stage's: the bucket is shared, and at its root every
// other application's uploads are under the output too.
var ownKey = regexp.MustCompile(`^(?:` +
	`dt=\d{4}-\d{2}-\d{2}/run=[A-Za-z0-9._-]{1,128}/(?:` +
	`part-\d{5,}` + extensions + `|` +
	`shard=\d+-of-\d+/[0-9a-f]+-part-\d{5,}` + extensions + `|` +
	regexp.QuoteMeta(sink.VerdictFile) + `|` + regexp.QuoteMeta(sink.ManifestFile) + `|` + regexp.QuoteMeta(sink.SuccessFile) + `)` +
	`|` + regexp.QuoteMeta(ShardsFolder) + `/run=[A-Za-z0-9._-]{1,128}/[^/]+(?:/[^/]+)*` +
	`|` + regexp.QuoteMeta(sink.VerdictFile) +
	`)$`)

// extensions matches the part files' extensions.
var extensions = `(?:` + regexp.QuoteMeta(sink.FormatParquet.Ext()) + `|` + regexp.QuoteMeta(sink.FormatArrow.Ext()) + `)`

// ownUpload reports whether rel, a key relative to the output's prefix,
// is one the stage's protocol could have written (see ownKey): only such
// uploads are ever aborted.
func ownUpload(rel string) bool { return ownKey.MatchString(rel) }

// abortOwnUploads aborts the multipart uploads in progress under the
// output that the stage's protocol could have left (see ownKey), and the
// probes killed preflights left, and no other application's. It lists
// only the prefixes the stage writes under, so an output at a busy
// bucket's root does not list every upload of the bucket. A whole-config
// run calls it holding its storage path, after its own preflight: no
// other process may be in a preflight of this output, so a probe started
// before now is one a killed process left, whatever its age.
func abortOwnUploads(ctx context.Context, t *objstore.Target, now time.Time) (int, error) {
	n := 0
	for _, p := range []string{"dt=", ShardsFolder + "/", sink.VerdictFile} {
		k, err := t.AbortUploads(ctx, t.Key(p), ownUpload)
		n += k
		if err != nil {
			return n, err
		}
	}
	k, err := t.AbortProbes(ctx, now)
	return n + k, err
}
