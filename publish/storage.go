package publish

import (
	"context"
	"errors"
	"io"
	"time"
)

// ErrBadKey is wrapped by the error of a call given a key or prefix that
// is not a key of the backend's root (see CheckKey and CheckPrefix), one
// the backend keeps for itself (a folder's staging area), or one its
// store would not hold as it is (on S3, a key gocloud would list as
// another). Such a call touches nothing.
var ErrBadKey = errors.New("not a key under the storage's root")

// ErrNoAnswer is wrapped by the error of a call the store did not answer
// in time (an endpoint that accepts connections and never answers). What
// undoes a failed write should then leave the store alone, to the next
// reconcile, rather than wait for it again.
var ErrNoAnswer = errors.New("the store did not answer in time")

// Storage is where an export is published: a local folder or a bucket
// prefix, its root. Keys are relative to the root, slash-separated (see
// CheckKey); every method refuses a key or prefix that is not one, or
// that the backend cannot hold as it is, with an error wrapping
// ErrBadKey, so no key escapes the root. No key may be the
// folder of another ("a" and "a/b"): a local folder cannot hold both, and
// the protocol never writes both.
//
// An object is what a reader sees: listed by List, read by Read, sized by
// Stat. A part is a file of an export being written: staged by StagePart,
// it becomes an object at its key when completed (CompletePart,
// CompleteFolder). Caps says what else a backend guarantees.
//
// Every method may be called from several goroutines, and by several
// processes on one root at once: what they promise holds across processes
// (create-only means one creator among them all). Every method honours its
// context: a call whose context is done fails with an error wrapping the
// context's error, and a call that changes the store may then have
// changed it or not. Errors wrap fs.ErrExist, fs.ErrNotExist, ErrBadKey
// and ErrNoAnswer where the method says so, and name the key.
//
// publish/storagetest is the conformance suite every Storage passes.
type Storage interface {
	// Caps tells what the backend can do; it never changes.
	Caps() Caps

	// StagePart starts a part at key. It fails with an error wrapping
	// fs.ErrExist when an object is at key already. When Caps().HidesParts
	// no reader sees the part until it is completed; ListStaged lists it
	// from now on, with the token its Finish will give. Otherwise the part
	// becomes the object at key when Finish returns (create-only: Finish
	// fails with an error wrapping fs.ErrExist if another object took the
	// key meanwhile). The writer's requests use ctx.
	StagePart(ctx context.Context, key string) (PartWriter, error)

	// CompletePart makes the staged part p (as its Finish returned it)
	// the object at p.Key, create-only, and is idempotent:
	//   - nil when the part becomes the object, or became it before (the
	//     object is there with p.Size bytes and the staged part is gone;
	//     a store may not tell the part from another object of its size):
	//     a crash after the completion and before its record is rolled
	//     forward by completing again;
	//   - an error wrapping fs.ErrExist when another object holds the key
	//     (another size, or another part's), which is left as it was;
	//   - an error wrapping fs.ErrNotExist when neither the staged part
	//     nor an object is there (the part was aborted);
	//   - another error when the staged part does not hold p.Size bytes.
	// Without Caps().HidesParts the part is the object since Finish, and
	// CompletePart only checks it is there with p.Size bytes. Other
	// stagings of the same key can never be completed: a backend may
	// abort them (S3 does) or leave them to AbortStaged.
	CompletePart(ctx context.Context, p Part) error

	// CompleteFolder completes parts, every one under folder (a prefix
	// ending in "/", see CheckFolder), with CompletePart's answers. When
	// Caps().CompletesAtOnce the parts appear together — a reader sees all
	// of them or none — and folder is created with them: it fails with an
	// error wrapping fs.ErrExist, making nothing visible, when folder
	// holds an object that is not one of the parts, and is nil when it
	// holds every part already (a completion that went through). Without
	// it the parts are completed one by one, in order, as CompletePart
	// does, and an error leaves those before it completed.
	CompleteFolder(ctx context.Context, folder string, parts []Part) error

	// CheckPart reports whether p can still be completed, or was: nil when
	// the staged part holds p.Size bytes or the object at p.Key does; an
	// error wrapping fs.ErrNotExist when neither is there (the part was
	// aborted, by a lifecycle rule say); another error when a size
	// differs. It changes nothing.
	CheckPart(ctx context.Context, p Part) error

	// ListStaged lists the parts staged under prefix and neither completed
	// nor aborted — finished or not, in this process or another, before a
	// crash or now — in key order (then by start). Without
	// Caps().HidesParts a part is an object once finished, and the list is
	// empty.
	ListStaged(ctx context.Context, prefix string) ([]Staged, error)

	// AbortStaged aborts the staged parts ListStaged would list under
	// prefix that own accepts, and returns how many it aborted (a part
	// that went meanwhile is not counted). own must accept only parts the
	// caller's protocol could have staged: a bucket is shared, and at its
	// root every other application's uploads are under the root too.
	// Objects are left alone (see DeletePrefix); without
	// Caps().HidesParts it aborts nothing.
	AbortStaged(ctx context.Context, prefix string, own func(Staged) bool) (int, error)

	// PutIfAbsent writes data at key unless an object is there: created
	// is false, and the object is left as it was, when one is. Among
	// concurrent callers, one creates it. A reader sees the object whole
	// or not at all.
	PutIfAbsent(ctx context.Context, key string, data []byte) (created bool, err error)

	// Put writes data at key, replacing any object there: a reader sees
	// the old object or the new one, whole.
	Put(ctx context.Context, key string, data []byte) error

	// Read returns the object at key; a missing one gives an error
	// wrapping fs.ErrNotExist.
	Read(ctx context.Context, key string) ([]byte, error)

	// Stat gives the size of the object at key, and whether it exists. A
	// staged part is no object.
	Stat(ctx context.Context, key string) (size int64, exists bool, err error)

	// List lists the keys of the objects under prefix, at any depth, in
	// key order (byte-wise). Staged parts are not objects and are not
	// listed.
	List(ctx context.Context, prefix string) ([]string, error)

	// DeletePrefix deletes every object under prefix, which must not be
	// empty (emptying the whole root is refused with ErrBadKey), and
	// returns how many it deleted. A prefix may be a whole key, to delete
	// that object (and any whose key it begins). Staged parts are left
	// alone (see AbortStaged).
	DeletePrefix(ctx context.Context, prefix string) (int, error)

	// Where names key for people, in errors, logs and verdicts: a file
	// path, or a URL without its query.
	Where(key string) string
}

// Caps are the capabilities of a Storage: what the protocol asks instead
// of switching on the backend's type.
type Caps struct {
	// HidesParts: a staged part is invisible to every reader (List, Read,
	// Stat) until it is completed, even once finished, and ListStaged
	// finds it. A local folder stages in a hidden folder, S3 in a
	// multipart upload left uncompleted. Without it (Azure Blob Storage
	// and Google Cloud Storage through gocloud) a part is an object once
	// finished, so readers must rely on _SUCCESS and the manifest, and a
	// part no commit may choose yet (the shards' protocol) cannot be
	// staged.
	HidesParts bool
	// CompletesAtOnce: CompleteFolder makes all its parts visible in one
	// step, as a local folder's rename does. Without it parts appear one
	// by one, so an export made of several parts is seen half by a reader
	// that lists part files: such a backend publishes a run as one part.
	CompletesAtOnce bool
}

// PartWriter receives the bytes of one staged part. It is not safe for
// concurrent use.
type PartWriter interface {
	io.Writer
	// Finish ends the part and makes its bytes durable, and returns what
	// CompletePart takes. When Caps().HidesParts the part stays hidden;
	// otherwise it is the object at its key now.
	Finish() (Part, error)
	// Abort undoes the part, open or finished but not completed: its
	// bytes go, and without Caps().HidesParts so does the object Finish
	// created. It may be called more than once, runs even after the
	// writer's context is done (for a bounded time), and a part already
	// gone is no error.
	Abort() error
}

// Part is a finished staged part, as the protocol records it to complete
// it later, after a crash perhaps.
type Part struct {
	// Key is where the part becomes an object.
	Key string
	// Token tells the staged part from any other staging of its key: an
	// S3 multipart upload id, a folder's staging name; "" where the
	// backend needs none. S3 also completes and checks a part given ""
	// by the one upload of its key holding Size bytes, as a state written
	// before upload ids were recorded needs.
	Token string
	// Size is the number of bytes written.
	Size int64
}

// Staged is a staged part ListStaged found.
type Staged struct {
	// Key is where the part would become an object.
	Key string
	// Token is the part's token (see Part.Token).
	Token string
	// Started is when the part was staged, as the store tells it; zero
	// when it does not.
	Started time.Time
}

// CompleteEach is CompleteFolder for a backend that completes parts one
// by one: it checks folder and parts (see CheckFolder), then completes
// each part in order with s.CompletePart, stopping at the first error.
func CompleteEach(ctx context.Context, s Storage, folder string, parts []Part) error {
	if err := CheckFolder(folder, parts); err != nil {
		return err
	}
	for _, p := range parts {
		if err := s.CompletePart(ctx, p); err != nil {
			return err
		}
	}
	return nil
}
