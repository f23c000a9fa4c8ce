// Package browsertest decides what a test that needs Chromium does where
// none is found: it skips on a developer's machine without one, and fails
// where the environment says a browser must be there (.ci/run sets
// DATABREW_REQUIRE_BROWSER=1 after installing Chromium), so that in CI the
// [render] tests run and never pass by skipping.
package browsertest

import (
	"os"
	"testing"
)

// RequireEnv is the environment variable that turns a missing browser
// from a skip into a failure.
const RequireEnv = "DATABREW_REQUIRE_BROWSER"

// Need ends t when findErr, the error of looking for the browser, is not
// nil: a failure when RequireEnv is set, else a skip naming how to
// install one.
func Need(t testing.TB, findErr error) {
	t.Helper()
	if findErr == nil {
		return
	}
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%v (%s is set: this environment must have a browser)", findErr, RequireEnv)
		return
	}
	t.Skipf("%v (make tools installs chromium)", findErr)
}
