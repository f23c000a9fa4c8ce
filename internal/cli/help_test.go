package cli

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestHelpGolden compares the --help output of every command with its
// golden file; run with -update after changing a usage text on purpose.
func TestHelpGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"main", []string{"--help"}},
		{"run", []string{"run", "--help"}},
		{"commit", []string{"commit", "--help"}},
		{"report", []string{"report", "--help"}},
		{"check", []string{"check", "--help"}},
		{"state", []string{"state", "--help"}},
		{"demo", []string{"demo", "--help"}},
		{"schema", []string{"schema", "--help"}},
		{"version", []string{"version", "--help"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			r := runMain(t, tt.args...)
			if r.code != ExitOK || r.stderr != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing", r.code, r.stderr)
			}
			compareGolden(t, tt.golden+".txt", r.stdout)
		})
	}
}

// TestUsageOnStderr: without a command, or with an unknown one, the main
// usage goes to stderr and the exit code is 2; the short forms of help
// print the same text as --help.
func TestUsageOnStderr(t *testing.T) {
	r := runMain(t)
	if r.code != ExitUsage || r.stdout != "" {
		t.Errorf("no command: exit %d, stdout %q", r.code, r.stdout)
	}
	compareGolden(t, "main.txt", r.stderr)

	r = runMain(t, "frobnicate")
	if r.code != ExitUsage || r.stdout != "" {
		t.Errorf("unknown command: exit %d, stdout %q", r.code, r.stdout)
	}
	compareGolden(t, "unknown.txt", r.stderr)

	for _, args := range [][]string{{"help"}, {"-h"}} {
		if r := runMain(t, args...); r.code != ExitOK {
			t.Errorf("%s: exit %d", args, r.code)
		} else {
			compareGolden(t, "main.txt", r.stdout)
		}
	}
	if r := runMain(t, "run", "-h"); r.code != ExitOK {
		t.Errorf("run -h: exit %d", r.code)
	} else {
		compareGolden(t, "run.txt", r.stdout)
	}

	r = runMain(t, "run", "--bogus", "x.toml")
	if r.code != ExitUsage || r.stdout != "" {
		t.Errorf("unknown flag: exit %d, stdout %q", r.code, r.stdout)
	}
	compareGolden(t, "run-bad-flag.txt", r.stderr)
}

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update to accept it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
