package stage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/databrew/databrew-stage/objstore"
	"github.com/databrew/databrew-stage/sink"
)

// ShardsFolder is the folder of an export root that holds the control
// files of logical runs made of shards: ShardsFolder/run=ID/ holds the
// run's claim (_run.json), each shard's manifest, and the decision; on a
// local folder, the shards' staged files too. The leading "." hides it
// from dataset readers, as the staging folder is hidden.
const ShardsFolder = ".databrew-shards"

// shardLake is what the shard protocol needs of an export root: small
// control files under ShardsFolder/run=ID/, written over, created only
// when absent, read and deleted; the part files of one attempt of one
// shard, written without becoming visible, checked, and undone; and the
// completion that makes the decided attempts' parts visible in the run
// folder. Every method may be called again after a crash, and by two
// processes at once, and comes to the same end.
type shardLake interface {
	// id names the export root whatever the spelling of its URL or path.
	id() string
	// where names a path under the export root in errors and verdicts.
	where(rel string) string
	readControl(ctx context.Context, runID, name string) ([]byte, error)
	putControl(ctx context.Context, runID, name string, data []byte) error
	createControl(ctx context.Context, runID, name string, data []byte) (created bool, err error)
	deleteControl(ctx context.Context, runID, name string) error
	// attemptParts is where an attempt of a shard writes its part files,
	// invisible to readers until completeRun; dir names them for the
	// state and undoStaged; finalName gives a part's name in the shard's
	// folder of the run, from its name in the store.
	attemptParts(ctx context.Context, runID, runPath, shard, attempt string) (store sink.PartStore, dir string, finalName func(string) string, uploads func() map[string]string)
	// checkStaged reports whether every part a manifest lists can still
	// be completed (or was): fs.ErrNotExist when one is gone.
	checkStaged(ctx context.Context, runID, runPath string, m shardManifest) error
	// undoStaged removes every part file staged in dir (as attemptParts
	// named it), finished or not.
	undoStaged(ctx context.Context, dir string) error
	// completeRun makes the parts of the decided attempts visible under
	// runPath (dt=D/run=ID), each in its shard's folder; discardOthers
	// then removes every other attempt's parts of the run.
	completeRun(ctx context.Context, runID, runPath string, decided []shardManifest) error
	discardOthers(ctx context.Context, runID, runPath string, decided []shardManifest) error
	// hasRunFile and readRunFile look at a file of the run folder;
	// putRunFile creates one there only when absent.
	hasRunFile(ctx context.Context, runPath, name string) (bool, error)
	readRunFile(ctx context.Context, runPath, name string) ([]byte, error)
	putRunFile(ctx context.Context, runPath, name string, data []byte) error
	// putVerdict replaces the export root's _verdict.json.
	putVerdict(ctx context.Context, data []byte) error
	// sweep removes what killed processes left that no run owns (on S3,
	// the uploads of preflight probes older than a preflight lasts).
	sweep(ctx context.Context, now time.Time) (int, error)
}

// lakeOf is the shard protocol of an export target.
func lakeOf(target exportTarget) (shardLake, error) {
	switch b := target.(type) {
	case *objectTarget:
		if !b.t.HidesParts() {
			return nil, fmt.Errorf("output %s: shards need an output that keeps uploaded parts invisible until the commit (s3://) or a local folder", b.t.URL())
		}
		return objectLake{b}, nil
	case *folderTarget:
		abs, err := filepath.Abs(b.layout.Output)
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", b.layout.Output, err)
		}
		return folderLake{root: abs}, nil
	}
	return nil, errors.New("shards are not supported for this output")
}

// controlPath is a control file's path under the export root.
func controlPath(runID, name string) string { return ShardsFolder + "/run=" + runID + "/" + name }

// shardFolder is a shard's folder in its run folder.
func shardFolder(shard string) string { return "shard=" + shard }

// objectLake is the shard protocol in object storage. An attempt's parts
// are multipart uploads of their final keys, left open:
// dt=D/run=ID/shard=I-of-N/<attempt>-part-00000.parquet, so the keys of
// two attempts of a shard never meet; the commit completes the decided
// attempt's and aborts the others'.
type objectLake struct{ o *objectTarget }

func (l objectLake) id() string { return l.o.t.ID() }

func (l objectLake) where(rel string) string { return l.o.where(l.o.t.Key(rel)) }

func (l objectLake) readControl(ctx context.Context, runID, name string) ([]byte, error) {
	return l.o.t.Read(ctx, l.o.t.Key(controlPath(runID, name)))
}

func (l objectLake) putControl(ctx context.Context, runID, name string, data []byte) error {
	return l.o.t.Put(ctx, l.o.t.Key(controlPath(runID, name)), data)
}

func (l objectLake) createControl(ctx context.Context, runID, name string, data []byte) (bool, error) {
	return l.o.t.PutIfAbsent(ctx, l.o.t.Key(controlPath(runID, name)), data)
}

func (l objectLake) deleteControl(ctx context.Context, runID, name string) error {
	_, err := l.o.t.DeletePrefix(ctx, l.o.t.Key(controlPath(runID, name)))
	return err
}

// shardPrefix is the key prefix of a shard's parts in the run folder.
func (l objectLake) shardPrefix(runPath, shard string) string {
	return l.o.t.Key(runPath + "/" + shardFolder(shard) + "/")
}

func (l objectLake) attemptParts(ctx context.Context, _, runPath, shard, attempt string) (sink.PartStore, string, func(string) string, func() map[string]string) {
	prefix := l.shardPrefix(runPath, shard)
	parts := l.o.t.Parts(ctx, prefix)
	named := func(name string) string { return attempt + "-" + name }
	return attemptNamed{objectParts{parts}, named}, prefix + attempt + "-", named, parts.UploadIDs
}

func (l objectLake) checkStaged(ctx context.Context, _, runPath string, m shardManifest) error {
	for _, f := range m.Files {
		key := l.shardPrefix(runPath, m.Shard) + f.Name
		if err := l.o.t.CheckPart(ctx, key, m.Uploads[f.Name], f.Bytes); err != nil {
			return err
		}
	}
	return nil
}

func (l objectLake) undoStaged(ctx context.Context, dir string) error {
	if _, err := l.o.t.AbortUploads(ctx, dir, ownUpload); err != nil {
		return err
	}
	_, err := l.o.t.DeletePrefix(ctx, dir)
	return err
}

func (l objectLake) completeRun(ctx context.Context, _, runPath string, decided []shardManifest) error {
	for _, m := range decided {
		for _, f := range m.Files {
			key := l.shardPrefix(runPath, m.Shard) + f.Name
			if err := l.completePart(ctx, key, m.Uploads[f.Name], f.Bytes); err != nil {
				return fmt.Errorf("shard %s: %w", m.Shard, err)
			}
		}
	}
	return nil
}

// completePart completes a decided part. Another process finishing the
// same decision (a second commit, a shard's next run) may be completing
// it right then, and while it does a store can answer that the upload is
// gone before the object appears, or list the upload's parts half: the
// part is looked at again a few times before the error stands. (Another
// object at the key is no such moment, nor a store that does not answer:
// looking again would only wait for it again.)
func (l objectLake) completePart(ctx context.Context, key, uploadID string, size int64) error {
	wait := 50 * time.Millisecond
	for try := 0; ; try++ {
		err := l.o.t.CompletePart(ctx, key, uploadID, size)
		if err == nil || errors.Is(err, objstore.ErrExists) || errors.Is(err, objstore.ErrTimeout) || try == 7 {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func (l objectLake) discardOthers(ctx context.Context, _, runPath string, decided []shardManifest) error {
	keep := map[string]bool{}
	for _, m := range decided {
		for _, f := range m.Files {
			keep[l.shardPrefix(runPath, m.Shard)+f.Name] = true
		}
	}
	// Only uploads: every decided part is an object by now, and no other
	// attempt's part was ever completed.
	keys, err := l.o.t.ListUploads(ctx, l.o.t.Key(runPath+"/"))
	if err != nil {
		return err
	}
	for _, k := range slices.Compact(keys) {
		if keep[k] {
			continue // a decided part's second upload: CompletePart refused two
		}
		if _, err := l.o.t.AbortUploads(ctx, k, ownUpload); err != nil {
			return err
		}
	}
	return nil
}

func (l objectLake) hasRunFile(ctx context.Context, runPath, name string) (bool, error) {
	_, exists, err := l.o.t.Stat(ctx, l.o.t.Key(runPath+"/"+name))
	return exists, err
}

func (l objectLake) readRunFile(ctx context.Context, runPath, name string) ([]byte, error) {
	return l.o.t.Read(ctx, l.o.t.Key(runPath+"/"+name))
}

func (l objectLake) putRunFile(ctx context.Context, runPath, name string, data []byte) error {
	_, err := l.o.t.PutIfAbsent(ctx, l.o.t.Key(runPath+"/"+name), data)
	return err
}

func (l objectLake) putVerdict(ctx context.Context, data []byte) error {
	return l.o.writeVerdict(ctx, data)
}

func (l objectLake) sweep(ctx context.Context, now time.Time) (int, error) {
	return l.o.t.AbortStaleProbes(ctx, now)
}

// attemptNamed is a part store whose files are named for an attempt.
type attemptNamed struct {
	sink.PartStore
	name func(string) string
}

func (a attemptNamed) Create(name string) (sink.PartWriter, error) {
	return a.PartStore.Create(a.name(name))
}

func (a attemptNamed) Remove(name string) error { return a.PartStore.Remove(a.name(name)) }

// folderLake is the shard protocol in a local (or shared) folder. An
// attempt's files are written to
// ShardsFolder/run=ID/attempts/shard=I-of-N-<attempt>/; the commit renames
// each decided attempt's folder to ShardsFolder/run=ID/data/shard=I-of-N,
// and then that data folder to dt=D/run=ID: every shard's files appear at
// once.
type folderLake struct{ root string }

func (l folderLake) id() string { return l.root }

func (l folderLake) path(rel string) string { return filepath.Join(l.root, filepath.FromSlash(rel)) }

func (l folderLake) where(rel string) string { return l.path(rel) }

func (l folderLake) readControl(_ context.Context, runID, name string) ([]byte, error) {
	b, err := os.ReadFile(l.path(controlPath(runID, name)))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", l.path(controlPath(runID, name)), err)
	}
	return b, nil
}

func (l folderLake) putControl(_ context.Context, runID, name string, data []byte) error {
	return sink.WriteFileAtomic(l.path(controlPath(runID, name)), data)
}

func (l folderLake) createControl(_ context.Context, runID, name string, data []byte) (bool, error) {
	return sink.CreateFileOnce(l.path(controlPath(runID, name)), data)
}

func (l folderLake) deleteControl(_ context.Context, runID, name string) error {
	err := os.Remove(l.path(controlPath(runID, name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// attemptDir is where an attempt of a shard stages its files.
func (l folderLake) attemptDir(runID, shard, attempt string) string {
	return l.path(controlPath(runID, "attempts/"+shardFolder(shard)+"-"+attempt))
}

// dataDir is where the decided attempts are gathered, as the run folder
// will hold them.
func (l folderLake) dataDir(runID string) string { return l.path(controlPath(runID, "data")) }

func (l folderLake) attemptParts(_ context.Context, runID, _, shard, attempt string) (sink.PartStore, string, func(string) string, func() map[string]string) {
	dir := l.attemptDir(runID, shard, attempt)
	return &sink.DirParts{Dir: dir}, dir, func(name string) string { return name }, func() map[string]string { return nil }
}

func (l folderLake) checkStaged(_ context.Context, runID, runPath string, m shardManifest) error {
	for _, f := range m.Files {
		// Where the file is: staged, gathered, or published.
		var found bool
		for _, dir := range []string{l.attemptDir(runID, m.Shard, m.Attempt), filepath.Join(l.dataDir(runID), shardFolder(m.Shard)),
			filepath.Join(l.path(runPath), shardFolder(m.Shard))} {
			st, err := os.Stat(filepath.Join(dir, f.Name))
			if err == nil && st.Size() == f.Bytes {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("shard %s: part %s of attempt %s: %w", m.Shard, f.Name, m.Attempt, fs.ErrNotExist)
		}
	}
	return nil
}

func (l folderLake) undoStaged(_ context.Context, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
}

func (l folderLake) completeRun(ctx context.Context, runID, runPath string, decided []shardManifest) error {
	runDir, data := l.path(runPath), l.dataDir(runID)
	if sink.Exists(runDir) {
		return nil // gathered and renamed by an earlier attempt, or another process
	}
	if err := l.checkAll(ctx, runID, runPath, decided); err != nil {
		return err
	}
	if err := os.MkdirAll(data, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", data, err)
	}
	for _, m := range decided {
		dest := filepath.Join(data, shardFolder(m.Shard))
		if len(m.Files) == 0 || sink.Exists(dest) {
			continue
		}
		if err := os.Rename(l.attemptDir(runID, m.Shard, m.Attempt), dest); err != nil {
			if sink.Exists(dest) || sink.Exists(runDir) {
				continue // another process moved it
			}
			return fmt.Errorf("shard %s: gather its files: %w", m.Shard, err)
		}
	}
	if err := sink.Promote(data, runDir); err != nil {
		if sink.Exists(runDir) {
			_ = os.Remove(data) // only when empty: left by a process that came second
			return nil
		}
		return err
	}
	return sink.SyncPromoted(data, runDir)
}

// checkAll checks every decided attempt's files are still there.
func (l folderLake) checkAll(ctx context.Context, runID, runPath string, decided []shardManifest) error {
	for _, m := range decided {
		if err := l.checkStaged(ctx, runID, runPath, m); err != nil {
			return err
		}
	}
	return nil
}

func (l folderLake) discardOthers(_ context.Context, runID, _ string, _ []shardManifest) error {
	dir := l.path(controlPath(runID, "attempts"))
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
}

func (l folderLake) hasRunFile(_ context.Context, runPath, name string) (bool, error) {
	_, err := os.Stat(filepath.Join(l.path(runPath), name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (l folderLake) readRunFile(_ context.Context, runPath, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(l.path(runPath), name))
}

func (l folderLake) putRunFile(_ context.Context, runPath, name string, data []byte) error {
	_, err := sink.CreateFileOnce(filepath.Join(l.path(runPath), name), data)
	return err
}

func (l folderLake) putVerdict(_ context.Context, data []byte) error {
	return sink.WriteFileAtomic(filepath.Join(l.root, sink.VerdictFile), data)
}

func (l folderLake) sweep(context.Context, time.Time) (int, error) { return 0, nil }
