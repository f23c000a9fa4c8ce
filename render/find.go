package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
)

// BrowserEnv names the environment variable that chooses the browser: a
// path, or a name looked up on PATH.
const BrowserEnv = "CHROMIUM"

// BrowserNames are the programs looked up on PATH, in order, when
// BrowserEnv is not set.
var BrowserNames = []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"}

// ErrNoBrowser matches the error Find returns when it finds no browser.
var ErrNoBrowser = errors.New("no browser found")

// Find returns the path of the browser to run: BrowserEnv when set, else
// the first of BrowserNames on PATH. getenv and lookPath default to the
// process environment and exec.LookPath. Its error names what it looked
// for.
func Find(getenv func(string) string, lookPath func(string) (string, error)) (string, error) {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	if getenv != nil {
		if v := strings.TrimSpace(getenv(BrowserEnv)); v != "" {
			p, err := lookPath(v)
			if err != nil {
				return "", fmt.Errorf("%w: %s=%s: %w", ErrNoBrowser, BrowserEnv, v, plainLookError(err))
			}
			return p, nil
		}
	}
	for _, name := range BrowserNames {
		if p, err := lookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %s is not set and none of %s is on PATH", ErrNoBrowser, BrowserEnv, strings.Join(BrowserNames, ", "))
}

// plainLookError is exec.LookPath's error without the name it repeats.
func plainLookError(err error) error {
	var e *exec.Error
	if errors.As(err, &e) {
		err = e.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
