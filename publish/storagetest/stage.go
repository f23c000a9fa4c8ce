package storagetest

import (
	"testing"

	"github.com/databrew/databrew-stage/publish"
)

// Stage stages data at key in s and finishes the part, failing t on any
// error or on a part that does not say its key and size: for a backend's
// own tests beside the suite.
func Stage(t *testing.T, s publish.Storage, key string, data []byte) publish.Part {
	t.Helper()
	f := &fixture{t: t, s: s, caps: s.Caps()}
	return f.stage(key, data)
}
