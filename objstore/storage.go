package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/databrew/databrew-stage/publish"
)

// Storage returns the output as the publish protocol's storage port. Its
// keys are relative to the output's prefix (Key turns one into a full
// key). On S3 it hides parts (multipart uploads left uncompleted, listed
// and aborted by ListStaged and AbortStaged, a part's token its upload
// id); on the other stores a part is an object once finished, with no
// token. It completes parts one by one. Besides the keys CheckKey
// refuses, it refuses those the store would not hold as they are: a
// segment ending in "..", which gocloud escapes and S3's multipart
// requests would not, and on S3 a key holding "__0x" (see
// checkEscapes). Its errors wrap fs.ErrExist where the Target's
// wrap ErrExists, and publish.ErrNoAnswer where they wrap ErrTimeout.
// The Target's methods keep their own behaviour; closing the Target ends
// the storage too.
func (t *Target) Storage() publish.Storage { return &storage{t: t} }

// storage is a Target as a publish.Storage.
type storage struct{ t *Target }

var _ publish.Storage = (*storage)(nil)

// Caps: S3 hides parts; nothing here completes at once.
func (s *storage) Caps() publish.Caps { return publish.Caps{HidesParts: s.t.hides} }

// Where is the output's URL without its query, and key.
func (s *storage) Where(key string) string {
	base, _, _ := strings.Cut(s.t.url, "?")
	return strings.TrimSuffix(base, "/") + "/" + key
}

// key checks a port key and returns its full key.
func (s *storage) key(ctx context.Context, what, key string) (string, error) {
	return s.full(ctx, what, key, publish.CheckKey, s.t.checkKey)
}

// prefix checks a port prefix and returns its full prefix.
func (s *storage) prefix(ctx context.Context, what, prefix string) (string, error) {
	return s.full(ctx, what, prefix, publish.CheckPrefix, s.t.checkPrefix)
}

// full checks rel with the port's rule and, once made a full key, with
// the target's, and refuses it when ctx is done already.
func (s *storage) full(ctx context.Context, what, rel string, portRule, targetRule func(string) error) (string, error) {
	if err := portRule(rel); err != nil {
		return "", err
	}
	full := s.t.Key(rel)
	if err := targetRule(full); err != nil {
		return "", fmt.Errorf("%w: %w", err, publish.ErrBadKey)
	}
	if err := s.checkEscapes(full); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("output %s: %s %q: %w", s.t.url, what, full, err)
	}
	return full, nil
}

// checkEscapes refuses, on S3, a key or prefix holding "__0x": gocloud
// reads such a sequence in a listed key as an escaped character
// ("__0x41__" is "A"), so an object the multipart requests made under it
// would be listed under another key.
func (s *storage) checkEscapes(full string) error {
	if s.t.s3 != nil && strings.Contains(full, "__0x") {
		return fmt.Errorf("output %s: key %q holds __0x, which gocloud would list as an escape: %w", s.t.url, full, publish.ErrBadKey)
	}
	return nil
}

// portErr makes a Target's error wrap what the port's errors wrap:
// fs.ErrExist besides ErrExists, publish.ErrNoAnswer besides ErrTimeout.
// Its message is the Target's.
func portErr(err error) error {
	if err == nil {
		return nil
	}
	var also []error
	if errors.Is(err, ErrExists) && !errors.Is(err, fs.ErrExist) {
		also = append(also, fs.ErrExist)
	}
	if errors.Is(err, ErrTimeout) {
		also = append(also, publish.ErrNoAnswer)
	}
	if len(also) == 0 {
		return err
	}
	return &portError{err: err, also: also}
}

// portError is an error that also wraps the port's sentinels.
type portError struct {
	err  error
	also []error
}

func (e *portError) Error() string   { return e.err.Error() }
func (e *portError) Unwrap() []error { return append([]error{e.err}, e.also...) }

// StagePart starts a part at key (see Target.CreatePart).
func (s *storage) StagePart(ctx context.Context, key string) (publish.PartWriter, error) {
	full, err := s.key(ctx, "create part", key)
	if err != nil {
		return nil, err
	}
	p, err := s.t.CreatePart(ctx, full)
	if err != nil {
		return nil, portErr(err)
	}
	return &partWriter{p: p, key: key}, nil
}

// CompletePart completes a part (see Target.CompletePart).
func (s *storage) CompletePart(ctx context.Context, p publish.Part) error {
	full, err := s.key(ctx, "complete part", p.Key)
	if err != nil {
		return err
	}
	return portErr(s.t.CompletePart(ctx, full, p.Token, p.Size))
}

// CompleteFolder completes the parts one by one.
func (s *storage) CompleteFolder(ctx context.Context, folder string, parts []publish.Part) error {
	return publish.CompleteEach(ctx, s, folder, parts)
}

// CheckPart checks a part can be completed, or was (see
// Target.CheckPart).
func (s *storage) CheckPart(ctx context.Context, p publish.Part) error {
	full, err := s.key(ctx, "check part", p.Key)
	if err != nil {
		return err
	}
	return portErr(s.t.CheckPart(ctx, full, p.Token, p.Size))
}

// ListStaged lists the multipart uploads in progress under prefix; the
// other stores have none.
func (s *storage) ListStaged(ctx context.Context, prefix string) ([]publish.Staged, error) {
	full, err := s.prefix(ctx, "list uploads", prefix)
	if err != nil {
		return nil, err
	}
	list := []publish.Staged{}
	if s.t.s3 == nil {
		return list, nil
	}
	ups, err := s.t.uploads(ctx, full)
	if err != nil {
		return nil, portErr(fmt.Errorf("output %s: list uploads under %q: %w", s.t.url, full, err))
	}
	for _, u := range ups {
		list = append(list, publish.Staged{Key: strings.TrimPrefix(u.key, s.t.prefix), Token: u.id, Started: u.initiated})
	}
	slices.SortFunc(list, func(a, b publish.Staged) int {
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

// AbortStaged aborts the multipart uploads under prefix that own accepts;
// the other stores have none.
func (s *storage) AbortStaged(ctx context.Context, prefix string, own func(publish.Staged) bool) (int, error) {
	list, err := s.ListStaged(ctx, prefix)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, st := range list {
		if !own(st) {
			continue
		}
		full := s.t.Key(st.Key)
		err := callErr(ctx, s.t, func(ctx context.Context) error {
			_, err := s.t.s3.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(s.t.name), Key: aws.String(full), UploadId: aws.String(st.Token),
			})
			return err
		})
		if isNoSuchUpload(err) {
			continue // completed or aborted meanwhile
		}
		if err != nil {
			return n, portErr(fmt.Errorf("output %s: abort upload of %q: %w", s.t.url, full, err))
		}
		n++
	}
	return n, nil
}

// PutIfAbsent writes data at key unless an object is there (see
// Target.PutIfAbsent).
func (s *storage) PutIfAbsent(ctx context.Context, key string, data []byte) (bool, error) {
	full, err := s.key(ctx, "write", key)
	if err != nil {
		return false, err
	}
	created, err := s.t.PutIfAbsent(ctx, full, data)
	return created, portErr(err)
}

// Put writes data at key (see Target.Put).
func (s *storage) Put(ctx context.Context, key string, data []byte) error {
	full, err := s.key(ctx, "write", key)
	if err != nil {
		return err
	}
	return portErr(s.t.Put(ctx, full, data))
}

// Read reads the object at key (see Target.Read).
func (s *storage) Read(ctx context.Context, key string) ([]byte, error) {
	full, err := s.key(ctx, "read", key)
	if err != nil {
		return nil, err
	}
	b, err := s.t.Read(ctx, full)
	return b, portErr(err)
}

// Stat gives the size of the object at key (see Target.Stat).
func (s *storage) Stat(ctx context.Context, key string) (int64, bool, error) {
	full, err := s.key(ctx, "stat", key)
	if err != nil {
		return 0, false, err
	}
	size, exists, err := s.t.Stat(ctx, full)
	return size, exists, portErr(err)
}

// List lists the keys under prefix in key order (see Target.ListKeys).
func (s *storage) List(ctx context.Context, prefix string) ([]string, error) {
	full, err := s.prefix(ctx, "list", prefix)
	if err != nil {
		return nil, err
	}
	keys, err := s.t.ListKeys(ctx, full)
	if err != nil {
		return nil, portErr(err)
	}
	rel := make([]string, len(keys))
	for i, k := range keys {
		rel[i] = strings.TrimPrefix(k, s.t.prefix)
	}
	return rel, nil
}

// DeletePrefix deletes the objects under prefix (see
// Target.DeletePrefix).
func (s *storage) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if prefix == "" {
		return 0, fmt.Errorf("output %s: delete under an empty prefix: refusing to empty the output: %w", s.t.url, publish.ErrBadKey)
	}
	full, err := s.prefix(ctx, "delete under", prefix)
	if err != nil {
		return 0, err
	}
	n, err := s.t.DeletePrefix(ctx, full)
	return n, portErr(err)
}

// partWriter is a Part as a publish.PartWriter.
type partWriter struct {
	p   *Part
	key string // the port's key
}

func (w *partWriter) Write(b []byte) (int, error) {
	n, err := w.p.Write(b)
	return n, portErr(err)
}

// Finish ends the part (see Part.Finish); its token is its upload id.
func (w *partWriter) Finish() (publish.Part, error) {
	if err := w.p.Finish(); err != nil {
		return publish.Part{}, portErr(err)
	}
	return publish.Part{Key: w.key, Token: w.p.UploadID(), Size: w.p.Size()}, nil
}

// Abort undoes the part (see Part.Abort).
func (w *partWriter) Abort() error { return portErr(w.p.Abort()) }
