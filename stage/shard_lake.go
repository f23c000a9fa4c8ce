package stage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/databrew/databrew-stage/sink"
)

// ShardsFolder is the folder of an export root that holds the control
// files of logical runs made of shards: ShardsFolder/run=ID/ holds the
// run's claim (_run.json), each shard's manifest, and the commit's
// decision; on a local folder, the shards' staged files too. The leading
// "." hides it from dataset readers, as the staging folder is hidden.
const ShardsFolder = ".databrew-shards"

// shardLake is what the shard protocol needs of an export root: small
// control files under ShardsFolder/run=ID/, written over, created only
// when absent, read and deleted; the part files of one shard, written
// without becoming visible, and undone; and the commit that makes every
// shard's parts visible in the run folder at once.
type shardLake interface {
	// where names a path under the export root in errors and verdicts.
	where(rel string) string
	readControl(ctx context.Context, runID, name string) ([]byte, error)
	putControl(ctx context.Context, runID, name string, data []byte) error
	createControl(ctx context.Context, runID, name string, data []byte) (created bool, err error)
	deleteControl(ctx context.Context, runID, name string) error
	// shardParts is where shard writes its part files: invisible to
	// readers until completeRun; dir names it for the state.
	shardParts(ctx context.Context, runID, shard, runPath string) (store sink.PartStore, dir string, uploads func() map[string]string)
	// undoStaged removes every part file staged in dir (as shardParts
	// named it), finished or not.
	undoStaged(ctx context.Context, dir string) error
	// completeRun makes the staged parts of every shard visible under
	// runPath (dt=D/run=ID); it may be called again after a crash.
	completeRun(ctx context.Context, runID, runPath string, shards []shardManifest) error
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

// controlPath is a control file's path under the export root.
func controlPath(runID, name string) string { return ShardsFolder + "/run=" + runID + "/" + name }

// objectLake is the shard protocol in object storage. A shard's parts
// are multipart uploads of their final keys, dt=D/run=ID/shard=I-of-N/,
// left open; the commit completes them.
type objectLake struct{ o *objectTarget }

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

func (l objectLake) shardParts(ctx context.Context, _, shard, runPath string) (sink.PartStore, string, func() map[string]string) {
	prefix := l.o.t.Key(runPath + "/shard=" + shard + "/")
	parts := l.o.t.Parts(ctx, prefix)
	return objectParts{parts}, prefix, parts.UploadIDs
}

func (l objectLake) undoStaged(ctx context.Context, prefix string) error {
	if _, err := l.o.t.AbortUploads(ctx, prefix); err != nil {
		return err
	}
	_, err := l.o.t.DeletePrefix(ctx, prefix)
	return err
}

func (l objectLake) completeRun(ctx context.Context, _, runPath string, shards []shardManifest) error {
	for _, m := range shards {
		for _, f := range m.Files {
			key := l.o.t.Key(runPath + "/shard=" + m.Shard + "/" + f.Name)
			if err := l.o.t.CompletePart(ctx, key, m.Uploads[f.Name], f.Bytes); err != nil {
				return fmt.Errorf("shard %s: %w", m.Shard, err)
			}
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

func (l objectLake) sweep(ctx context.Context, now time.Time) (int, error) {
	return l.o.t.AbortStaleProbes(ctx, now)
}

func (l objectLake) putVerdict(ctx context.Context, data []byte) error {
	return l.o.writeVerdict(ctx, data)
}

// folderLake is the shard protocol in a local (or shared) folder. A
// shard's files are written to ShardsFolder/run=ID/data/shard=I-of-N/;
// the commit renames ShardsFolder/run=ID/data to dt=D/run=ID, which makes
// every shard's files visible at once.
type folderLake struct{ root string }

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
	return createFileOnce(l.path(controlPath(runID, name)), data)
}

func (l folderLake) deleteControl(_ context.Context, runID, name string) error {
	err := os.Remove(l.path(controlPath(runID, name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// dataDir is where the shards of a run stage their files, as the run
// folder will hold them.
func (l folderLake) dataDir(runID string) string { return l.path(controlPath(runID, "data")) }

func (l folderLake) shardParts(_ context.Context, runID, shard, _ string) (sink.PartStore, string, func() map[string]string) {
	dir := filepath.Join(l.dataDir(runID), "shard="+shard)
	return &sink.DirParts{Dir: dir}, dir, func() map[string]string { return nil }
}

func (l folderLake) undoStaged(_ context.Context, dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
}

func (l folderLake) completeRun(_ context.Context, runID, runPath string, shards []shardManifest) error {
	runDir := l.path(runPath)
	data := l.dataDir(runID)
	if !sink.Exists(data) && sink.Exists(runDir) {
		return nil // renamed by an earlier attempt
	}
	for _, m := range shards {
		for _, f := range m.Files {
			p := filepath.Join(data, "shard="+m.Shard, f.Name)
			st, err := os.Stat(p)
			if err != nil {
				return fmt.Errorf("shard %s: %w", m.Shard, err)
			}
			if st.Size() != f.Bytes {
				return fmt.Errorf("shard %s: %s holds %d bytes, its manifest says %d", m.Shard, p, st.Size(), f.Bytes)
			}
		}
	}
	if err := os.MkdirAll(data, 0o755); err != nil { // a run whose shards staged nothing
		return fmt.Errorf("create %s: %w", data, err)
	}
	if err := sink.Promote(data, runDir); err != nil {
		return err
	}
	return sink.SyncPromoted(data, runDir)
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
	_, err := createFileOnce(filepath.Join(l.path(runPath), name), data)
	return err
}

func (l folderLake) sweep(context.Context, time.Time) (int, error) { return 0, nil }

func (l folderLake) putVerdict(_ context.Context, data []byte) error {
	return sink.WriteFileAtomic(filepath.Join(l.root, sink.VerdictFile), data)
}

// createFileOnce creates path with data unless a file is there: the data
// is written and synced under a temporary name first, then linked into
// place, so the file appears whole or not at all and a second writer
// finds the first one's (created is false).
func createFileOnce(path string, data []byte) (created bool, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return false, fmt.Errorf("create %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("create %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return true, err
	}
	return true, nil
}

// syncDir makes a folder's entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
