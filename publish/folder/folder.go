// Package folder is publish.Storage in a local or shared folder, the
// export root: a key is a file path under it.
//
// Parts are staged in a hidden folder beside the root, ".NAME.databrew-staged"
// for a root named NAME, so no reader of the root lists them, whatever its
// globs (DuckDB's and Polars' ** enter hidden folders). When a file made
// there cannot be linked into the root — the root is a mount point, or its
// parent is not writable — the staging area is StagingDir inside the root
// instead: on the root's file system, and hidden from dataset readers
// (pyarrow, Spark and Hive skip names starting with "."; so do Python's and
// bash's ** globs). A part is written to STAGING/parts/TOKEN/KEY and completed
// by a hard link to its key, which fails when the key is taken, so the
// completion is create-only; CompleteFolder links the parts into a new
// folder in the staging area and renames it into place, so a whole run
// appears at once (HidesParts and CompletesAtOnce). Small files are
// written to STAGING/tmp, synced, then linked into place (PutIfAbsent)
// or renamed over the old file (Put). Every change is synced, with the
// folders that hold it, before a method returns.
//
// The root's subfolders must be on its file system (not mount points of
// their own), and the file system must have hard links, as POSIX local
// file systems and NFS do.
package folder

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/databrew/databrew-stage/publish"
)

// StagingDir is the staging area inside the root, when it cannot be beside
// it: no key may be in it.
const StagingDir = ".databrew-staged"

// DebrisAge is how old what a crash left in the staging area and no part
// owns (a half-made temporary file or folder) must be before AbortStaged
// removes it: old enough that no process still works on it.
const DebrisAge = time.Hour

// The folders of the staging area.
const (
	partsDir    = "parts"    // parts/TOKEN/KEY: the staged parts
	tmpDir      = "tmp"      // files Put and PutIfAbsent write first
	completeDir = "complete" // folders CompleteFolder assembles
)

// Storage is a folder as a publish.Storage. Its methods may be called from
// several goroutines and processes.
type Storage struct {
	root    string
	staging string
}

var _ publish.Storage = (*Storage)(nil)

// Open returns the storage of the folder root, which it creates if it is
// not there.
func Open(root string) (*Storage, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", root, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("output %s: %w", root, err)
	}
	staging := filepath.Join(abs, StagingDir)
	if beside := BesideStaging(abs); linksInto(beside, abs) {
		staging = beside
	}
	return &Storage{root: abs, staging: staging}, nil
}

// BesideStaging is the staging area beside the root: a hidden sibling.
func BesideStaging(root string) string {
	return filepath.Join(filepath.Dir(root), "."+filepath.Base(root)+StagingDir)
}

// Staging is the staging area the storage uses.
func (s *Storage) Staging() string { return s.staging }

// linksInto reports whether a file made in the folder from can be hard
// linked into the folder to: not across file systems, nor between two
// mounts of one, nor when either cannot be written. It removes what it
// made, and the folder from too when the answer is no and it is empty.
func linksInto(from, to string) bool {
	if filepath.Dir(to) == to || os.MkdirAll(from, 0o755) != nil {
		return false
	}
	ok := false
	if probe, err := os.CreateTemp(from, "probe-"); err == nil {
		_ = probe.Close()
		dest := filepath.Join(to, "."+filepath.Base(probe.Name()))
		if os.Link(probe.Name(), dest) == nil {
			ok = true
			_ = os.Remove(dest)
		}
		_ = os.Remove(probe.Name())
	}
	if !ok {
		_ = os.Remove(from) // only when empty
	}
	return ok
}

// Root is the folder's absolute path.
func (s *Storage) Root() string { return s.root }

// Caps: a folder hides parts and completes a folder of them at once.
func (s *Storage) Caps() publish.Caps {
	return publish.Caps{HidesParts: true, CompletesAtOnce: true}
}

// Where is the file path of key.
func (s *Storage) Where(key string) string { return s.path(key) }

// path is the file path of a key or folder under the root.
func (s *Storage) path(key string) string {
	return filepath.Join(s.root, filepath.FromSlash(key))
}

// checkKey is publish.CheckKey, refusing keys in the staging area too.
func checkKey(key string) error {
	if err := publish.CheckKey(key); err != nil {
		return err
	}
	if key == StagingDir || strings.HasPrefix(key, StagingDir+"/") {
		return fmt.Errorf("key %q is in the staging area %s: %w", key, StagingDir, publish.ErrBadKey)
	}
	return nil
}

// checkPrefix is publish.CheckPrefix, refusing prefixes in the staging
// area too.
func checkPrefix(prefix string) error {
	if err := publish.CheckPrefix(prefix); err != nil {
		return err
	}
	if strings.HasPrefix(prefix, StagingDir+"/") {
		return fmt.Errorf("prefix %q is in the staging area %s: %w", prefix, StagingDir, publish.ErrBadKey)
	}
	return nil
}

// canceled wraps a done context's error for what was being done.
func canceled(ctx context.Context, what string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// newToken names a staged part or a temporary folder.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validToken reports whether token is one newToken could have made, so
// it names a folder in the staging area and nothing else.
func validToken(token string) bool {
	if len(token) != 32 {
		return false
	}
	_, err := hex.DecodeString(token)
	return err == nil
}

// stagedFile is where the part token of key is staged.
func (s *Storage) stagedFile(token, key string) string {
	return filepath.Join(s.staging, partsDir, token, filepath.FromSlash(key))
}

// StagePart starts a part at key in the staging area; see
// publish.Storage.
func (s *Storage) StagePart(ctx context.Context, key string) (publish.PartWriter, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	where := s.path(key)
	if err := canceled(ctx, "stage part "+where); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(where); err == nil {
		return nil, fmt.Errorf("stage part %s: %w", where, fs.ErrExist)
	} else if !notExist(err) {
		return nil, fmt.Errorf("stage part %s: %w", where, err)
	}
	token := newToken()
	file := s.stagedFile(token, key)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return nil, fmt.Errorf("stage part %s: %w", where, err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		_ = os.RemoveAll(filepath.Join(s.staging, partsDir, token))
		return nil, fmt.Errorf("stage part %s: %w", where, err)
	}
	return &partWriter{s: s, ctx: ctx, key: key, token: token, file: file, f: f}, nil
}

// CompletePart links the staged part to its key; see publish.Storage.
func (s *Storage) CompletePart(ctx context.Context, p publish.Part) error {
	if err := checkKey(p.Key); err != nil {
		return err
	}
	dst := s.path(p.Key)
	if err := canceled(ctx, "complete part "+dst); err != nil {
		return err
	}
	if !validToken(p.Token) {
		return s.completed(p)
	}
	staged := s.stagedFile(p.Token, p.Key)
	fi, err := os.Lstat(staged)
	switch {
	case notExist(err):
		return s.completed(p)
	case err != nil:
		return fmt.Errorf("complete part %s: %w", dst, err)
	case !fi.Mode().IsRegular() || fi.Size() != p.Size:
		return fmt.Errorf("complete part %s: the staged part holds %d bytes, not %d", dst, fi.Size(), p.Size)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("complete part %s: %w", dst, err)
	}
	if err := os.Link(staged, dst); err != nil {
		switch {
		case errors.Is(err, fs.ErrExist):
			// This part, linked before a crash (or by another process),
			// or another object.
			if di, lerr := os.Lstat(dst); lerr != nil || !os.SameFile(fi, di) {
				return fmt.Errorf("complete part %s: another object holds the key: %w", dst, fs.ErrExist)
			}
		case notExist(err):
			return s.completed(p) // completed by another process meanwhile
		default:
			return fmt.Errorf("complete part %s: %w", dst, err)
		}
	}
	if err := syncUp(filepath.Dir(dst), s.root); err != nil {
		return fmt.Errorf("complete part %s: %w", dst, err)
	}
	s.dropStaged(p.Token)
	return nil
}

// completed is CompletePart's answer when p is not staged: nil when the
// object at its key has its size.
func (s *Storage) completed(p publish.Part) error {
	dst := s.path(p.Key)
	fi, err := os.Lstat(dst)
	switch {
	case notExist(err):
		return fmt.Errorf("complete part %s: no staged part and no object: %w", dst, fs.ErrNotExist)
	case err != nil:
		return fmt.Errorf("complete part %s: %w", dst, err)
	case fi.Mode().IsRegular() && fi.Size() == p.Size:
		return nil
	default:
		return fmt.Errorf("complete part %s: an object of %d bytes, not %d, holds the key: %w", dst, fi.Size(), p.Size, fs.ErrExist)
	}
}

// dropStaged removes a completed part's staging folder. What a crash
// keeps it from removing stays there until AbortStaged: completing the
// part again finds it linked already.
func (s *Storage) dropStaged(token string) {
	if validToken(token) {
		_ = os.RemoveAll(filepath.Join(s.staging, partsDir, token))
	}
}

// CheckPart reports whether p is staged or completed with its size; see
// publish.Storage.
func (s *Storage) CheckPart(ctx context.Context, p publish.Part) error {
	if err := checkKey(p.Key); err != nil {
		return err
	}
	dst := s.path(p.Key)
	if err := canceled(ctx, "check part "+dst); err != nil {
		return err
	}
	where, fi, err := dst, os.FileInfo(nil), error(nil)
	if validToken(p.Token) {
		where = s.stagedFile(p.Token, p.Key)
		fi, err = os.Lstat(where)
	}
	if fi == nil {
		where = dst
		fi, err = os.Lstat(dst)
	}
	switch {
	case notExist(err):
		return fmt.Errorf("part %s: no staged part and no object: %w", dst, fs.ErrNotExist)
	case err != nil:
		return fmt.Errorf("part %s: %w", dst, err)
	case !fi.Mode().IsRegular() || fi.Size() != p.Size:
		return fmt.Errorf("part %s: %s holds %d bytes, not %d", dst, where, fi.Size(), p.Size)
	}
	return nil
}

// PutIfAbsent writes data to a temporary file and links it to key; see
// publish.Storage.
func (s *Storage) PutIfAbsent(ctx context.Context, key string, data []byte) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	dst := s.path(key)
	if err := canceled(ctx, "write "+dst); err != nil {
		return false, err
	}
	tmp, err := s.writeTemp(data)
	if err != nil {
		return false, fmt.Errorf("write %s: %w", dst, err)
	}
	defer os.Remove(tmp)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return false, fmt.Errorf("write %s: %w", dst, err)
	}
	if err := os.Link(tmp, dst); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("write %s: %w", dst, err)
	}
	if err := syncUp(filepath.Dir(dst), s.root); err != nil {
		return true, fmt.Errorf("write %s: %w", dst, err)
	}
	return true, nil
}

// Put writes data to a temporary file and renames it over key; see
// publish.Storage.
func (s *Storage) Put(ctx context.Context, key string, data []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	dst := s.path(key)
	if err := canceled(ctx, "write "+dst); err != nil {
		return err
	}
	tmp, err := s.writeTemp(data)
	if err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	defer os.Remove(tmp) // after the rename, nothing is there
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	if err := syncUp(filepath.Dir(dst), s.root); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}

// writeTemp writes data to a new file in the staging area and syncs it.
func (s *Storage) writeTemp(data []byte) (string, error) {
	dir := filepath.Join(s.staging, tmpDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "put-")
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	// A reader sees the file with the mode a new file gets.
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// Read reads the file at key; see publish.Storage.
func (s *Storage) Read(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	path := s.path(key)
	if err := canceled(ctx, "read "+path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if notExist(err) {
		return nil, fmt.Errorf("read %s: %w", path, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// Stat gives the size of the file at key; see publish.Storage.
func (s *Storage) Stat(ctx context.Context, key string) (int64, bool, error) {
	if err := checkKey(key); err != nil {
		return 0, false, err
	}
	path := s.path(key)
	if err := canceled(ctx, "stat "+path); err != nil {
		return 0, false, err
	}
	fi, err := os.Lstat(path)
	switch {
	case notExist(err):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("stat %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return 0, false, fmt.Errorf("stat %s: not a file (%v)", path, fi.Mode().Type())
	}
	return fi.Size(), true, nil
}

// List lists the files under prefix in key order, the staging area
// aside; see publish.Storage.
func (s *Storage) List(ctx context.Context, prefix string) ([]string, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	keys, err := s.list(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s.path(prefix), err)
	}
	return keys, nil
}

// list walks the folder prefix names, or starts naming, visiting only
// the folders that may hold a key under prefix.
func (s *Storage) list(ctx context.Context, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir = prefix[:i]
	}
	start := s.path(dir)
	if fi, err := os.Lstat(start); notExist(err) || err == nil && !fi.IsDir() {
		return []string{}, nil
	} else if err != nil {
		return nil, err
	}
	keys := []string{}
	err := filepath.WalkDir(start, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if notExist(err) {
				return nil // removed while the walk went on
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(s.root, path)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		switch {
		case d.IsDir() && path == start:
			return nil
		case d.IsDir() && key == StagingDir:
			return filepath.SkipDir
		case d.IsDir():
			if k := key + "/"; !strings.HasPrefix(k, prefix) && !strings.HasPrefix(prefix, k) {
				return filepath.SkipDir
			}
		case d.Type().IsRegular() && strings.HasPrefix(key, prefix):
			keys = append(keys, key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(keys)
	return keys, nil
}

// DeletePrefix deletes the files under prefix and the folders that leaves
// empty; see publish.Storage.
func (s *Storage) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if prefix == "" {
		return 0, fmt.Errorf("delete under %s: refusing to empty the output: %w", s.root, publish.ErrBadKey)
	}
	if err := checkPrefix(prefix); err != nil {
		return 0, err
	}
	keys, err := s.list(ctx, prefix)
	if err != nil {
		return 0, fmt.Errorf("delete under %s: %w", s.path(prefix), err)
	}
	n := 0
	dirs := map[string]bool{}
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return n, fmt.Errorf("delete under %s: %w", s.path(prefix), err)
		}
		err := os.Remove(s.path(k))
		if notExist(err) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("delete %s: %w", s.path(k), err)
		}
		n++
		dirs[filepath.Dir(s.path(k))] = true
	}
	// Folders left empty go (no empty dt= folder without a run), from
	// the deepest up; then what is left is synced.
	sorted := slices.Collect(maps.Keys(dirs))
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, d := range sorted {
		for d != s.root && os.Remove(d) == nil {
			d = filepath.Dir(d)
		}
		if err := syncDir(d); err != nil && !notExist(err) {
			return n, fmt.Errorf("delete under %s: %w", s.path(prefix), err)
		}
	}
	return n, nil
}

// notExist reports an error saying a path is not there, also when a
// folder on its way is a file.
func notExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// syncDir makes a folder's entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// syncUp syncs dir and every folder above it up to top, which holds it,
// so entries that MkdirAll created on the way are durable too.
func syncUp(dir, top string) error {
	for {
		if err := syncDir(dir); err != nil {
			return err
		}
		if len(dir) <= len(top) {
			return nil
		}
		dir = filepath.Dir(dir)
	}
}
