package folder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/databrew/databrew-stage/publish"
)

// stagedPart is a folder of the staging area's parts folder.
type stagedPart struct {
	publish.Staged
	// keyless: the folder holds no file (a crash cut StagePart short).
	keyless bool
}

// staged lists the staging area's parts, every one when all is set, else
// those under prefix, in key order.
func (s *Storage) staged(ctx context.Context, prefix string, all bool) ([]stagedPart, error) {
	dir := filepath.Join(s.staging, partsDir)
	entries, err := os.ReadDir(dir)
	if notExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list []stagedPart
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !e.IsDir() || !validToken(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		key, err := keyIn(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		p := stagedPart{Staged: publish.Staged{Key: key, Token: e.Name(), Started: info.ModTime()}, keyless: key == ""}
		if all || !p.keyless && strings.HasPrefix(key, prefix) {
			list = append(list, p)
		}
	}
	slices.SortFunc(list, func(a, b stagedPart) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return strings.Compare(a.Token, b.Token)
	})
	return list, nil
}

// errFound stops a walk at the file it found.
var errFound = errors.New("found")

// keyIn is the key of the one file under a part's folder, "" when there
// is none.
func keyIn(dir string) (string, error) {
	var key string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if notExist(err) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			key = filepath.ToSlash(rel)
			return errFound
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFound) {
		return "", err
	}
	return key, nil
}

// ListStaged lists the parts staged under prefix; see publish.Storage.
func (s *Storage) ListStaged(ctx context.Context, prefix string) ([]publish.Staged, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	parts, err := s.staged(ctx, prefix, false)
	if err != nil {
		return nil, fmt.Errorf("list staged parts under %s: %w", s.path(prefix), err)
	}
	list := make([]publish.Staged, len(parts))
	for i, p := range parts {
		list[i] = p.Staged
	}
	return list, nil
}

// AbortStaged removes the parts staged under prefix that own accepts; see
// publish.Storage. It also removes what crashes left in the staging area
// that no part owns, once older than DebrisAge.
func (s *Storage) AbortStaged(ctx context.Context, prefix string, own func(publish.Staged) bool) (int, error) {
	if err := checkPrefix(prefix); err != nil {
		return 0, err
	}
	where := s.path(prefix)
	parts, err := s.staged(ctx, prefix, true)
	if err != nil {
		return 0, fmt.Errorf("abort staged parts under %s: %w", where, err)
	}
	old := time.Now().Add(-DebrisAge)
	n := 0
	for _, p := range parts {
		if err := ctx.Err(); err != nil {
			return n, fmt.Errorf("abort staged parts under %s: %w", where, err)
		}
		dir := filepath.Join(s.staging, partsDir, p.Token)
		switch {
		case p.keyless:
			if p.Started.Before(old) {
				_ = os.RemoveAll(dir)
			}
		case strings.HasPrefix(p.Key, prefix) && own(p.Staged):
			if _, err := os.Lstat(dir); err != nil {
				continue // gone meanwhile
			}
			if err := os.RemoveAll(dir); err != nil {
				return n, fmt.Errorf("abort staged part %s: %w", s.path(p.Key), err)
			}
			n++
		}
	}
	s.removeDebris(old)
	return n, nil
}

// removeDebris removes the temporary files and folders older than old.
func (s *Storage) removeDebris(old time.Time) {
	for _, sub := range []string{tmpDir, completeDir} {
		dir := filepath.Join(s.staging, sub)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if info, err := e.Info(); err == nil && info.ModTime().Before(old) {
				_ = os.RemoveAll(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// CompleteFolder links the staged parts into a new folder in the staging
// area and renames it to folder, so they all appear at once; see
// publish.Storage.
func (s *Storage) CompleteFolder(ctx context.Context, folder string, parts []publish.Part) error {
	if err := publish.CheckFolder(folder, parts); err != nil {
		return err
	}
	if err := checkPrefix(folder); err != nil {
		return err
	}
	dst := s.path(strings.TrimSuffix(folder, "/"))
	if err := canceled(ctx, "complete folder "+dst); err != nil {
		return err
	}
	if done, err := s.holds(dst, parts); err != nil || done {
		return err
	}
	tmp, err := s.assemble(folder, parts)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// Another process may have completed the parts meanwhile.
			if done, herr := s.holds(dst, parts); herr != nil || done {
				return herr
			}
		}
		return fmt.Errorf("complete folder %s: %w", dst, err)
	}
	defer os.RemoveAll(tmp) // nothing is there once renamed
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("complete folder %s: %w", dst, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		// The folder appeared meanwhile: another process's completion,
		// or another's folder.
		if done, herr := s.holds(dst, parts); herr != nil || done {
			return herr
		}
		return fmt.Errorf("complete folder %s: %w", dst, err)
	}
	if err := syncUp(filepath.Dir(dst), s.root); err != nil {
		return fmt.Errorf("complete folder %s: %w", dst, err)
	}
	for _, p := range parts {
		s.dropStaged(p.Token)
	}
	return nil
}

// holds reports whether the folder dst holds every part already (a
// completion that went through), and drops their staging then. It is an
// error wrapping fs.ErrExist when dst holds anything else; a folder that
// holds no file at all is removed, for the rename to take its place.
func (s *Storage) holds(dst string, parts []publish.Part) (bool, error) {
	if _, err := os.Lstat(dst); notExist(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("complete folder %s: %w", dst, err)
	}
	if !holdsFiles(dst) {
		return false, nil
	}
	for _, p := range parts {
		di, err := os.Lstat(s.path(p.Key))
		if err != nil || !di.Mode().IsRegular() || di.Size() != p.Size {
			return false, fmt.Errorf("complete folder %s: it holds other objects: %w", dst, fs.ErrExist)
		}
		if validToken(p.Token) {
			if si, err := os.Lstat(s.stagedFile(p.Token, p.Key)); err == nil && !os.SameFile(si, di) {
				return false, fmt.Errorf("complete folder %s: another object holds %s: %w", dst, p.Key, fs.ErrExist)
			}
		}
	}
	for _, p := range parts {
		s.dropStaged(p.Token)
	}
	return true, nil
}

// holdsFiles reports whether dir holds anything but folders; those it
// removes, the deepest first, when it holds nothing else.
func holdsFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return !notExist(err)
	}
	for _, e := range entries {
		if !e.IsDir() || holdsFiles(filepath.Join(dir, e.Name())) {
			return true
		}
	}
	_ = os.Remove(dir)
	return false
}

// assemble links every staged part into a new folder of the staging
// area, as folder will hold it, and syncs it. An error wrapping
// fs.ErrNotExist says a part is not staged.
func (s *Storage) assemble(folder string, parts []publish.Part) (string, error) {
	base := filepath.Join(s.staging, completeDir)
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(base, "folder-")
	if err != nil {
		return "", err
	}
	dirs := map[string]bool{tmp: true}
	for _, p := range parts {
		if !validToken(p.Token) {
			_ = os.RemoveAll(tmp)
			return "", fmt.Errorf("part %s is not staged: %w", p.Key, fs.ErrNotExist)
		}
		staged := s.stagedFile(p.Token, p.Key)
		fi, err := os.Lstat(staged)
		if err == nil && (!fi.Mode().IsRegular() || fi.Size() != p.Size) {
			err = fmt.Errorf("the staged part %s holds %d bytes, not %d", p.Key, fi.Size(), p.Size)
		}
		if err == nil {
			to := filepath.Join(tmp, filepath.FromSlash(strings.TrimPrefix(p.Key, folder)))
			if err = os.MkdirAll(filepath.Dir(to), 0o755); err == nil {
				err = os.Link(staged, to)
			}
			for d := filepath.Dir(to); len(d) >= len(tmp); d = filepath.Dir(d) {
				dirs[d] = true
			}
		}
		if err != nil {
			_ = os.RemoveAll(tmp)
			if notExist(err) {
				return "", fmt.Errorf("part %s is not staged: %w", p.Key, fs.ErrNotExist)
			}
			return "", err
		}
	}
	// The folder must have its entries on disk before it is renamed into
	// place.
	for d := range dirs {
		if err := syncDir(d); err != nil {
			_ = os.RemoveAll(tmp)
			return "", err
		}
	}
	return tmp, nil
}
