package stage

import (
	"testing"

	"github.com/databrew/databrew-stage/internal/testkit/browsertest"
	"github.com/databrew/databrew-stage/render"
)

// needBrowser skips a test that needs Chromium where there is none and
// it cannot be installed (not root): `make tools` and .ci/run install it,
// so in CI these tests run.
func needBrowser(t *testing.T) {
	t.Helper()
	_, err := render.Find(nil, nil)
	browsertest.Need(t, err)
}
