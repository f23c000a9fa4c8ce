package publish_test

import (
	"errors"
	"testing"

	"github.com/databrew/databrew-stage/publish"
)

func TestCheckKey(t *testing.T) {
	for _, k := range []string{"a", "a/b", "dt=2024-05-01/run=R/part-00000.parquet", ".databrew-shards/run=R/_run.json",
		"..a", "a..", "...", "a b/ü", "back\\slash", "_SUCCESS"} {
		if err := publish.CheckKey(k); err != nil {
			t.Errorf("CheckKey(%q) = %v; want nil", k, err)
		}
	}
	for _, k := range []string{"", "/", "/a", "a/", "a//b", ".", "..", "./a", "a/.", "a/./b", "../a", "a/../b", "a/..",
		"a\x00", "a\tb", "a\x7f", "\xc3"} {
		if err := publish.CheckKey(k); !errors.Is(err, publish.ErrBadKey) {
			t.Errorf("CheckKey(%q) = %v; want ErrBadKey", k, err)
		}
	}
}

func TestCheckPrefix(t *testing.T) {
	for _, p := range []string{"", "a", "a/", "dt=", "dt=2024-05-01/run=R/part-", ".databrew-probe-", "a/b/", "..a", "a/..b"} {
		if err := publish.CheckPrefix(p); err != nil {
			t.Errorf("CheckPrefix(%q) = %v; want nil", p, err)
		}
	}
	for _, p := range []string{"/", "/a", "a//", "a//b", ".", "..", "./", "../", "a/.", "a/..", "a/../", "../a", "a\nb"} {
		if err := publish.CheckPrefix(p); !errors.Is(err, publish.ErrBadKey) {
			t.Errorf("CheckPrefix(%q) = %v; want ErrBadKey", p, err)
		}
	}
}

func TestCheckFolder(t *testing.T) {
	part := func(k string) publish.Part { return publish.Part{Key: k} }
	if err := publish.CheckFolder("run/", []publish.Part{part("run/a"), part("run/b/c")}); err != nil {
		t.Errorf("CheckFolder = %v; want nil", err)
	}
	for _, c := range []struct {
		folder string
		parts  []publish.Part
		bad    bool // wraps ErrBadKey
	}{
		{"run", []publish.Part{part("run/a")}, true},
		{"", []publish.Part{part("a")}, true},
		{"run/", []publish.Part{part("other/a")}, true},
		{"run/", []publish.Part{part("run//a")}, true},
		{"../", []publish.Part{part("../a")}, true},
		{"run/", nil, false},
		{"run/", []publish.Part{part("run/a"), part("run/a")}, false},
	} {
		err := publish.CheckFolder(c.folder, c.parts)
		if err == nil || c.bad != errors.Is(err, publish.ErrBadKey) {
			t.Errorf("CheckFolder(%q, %v) = %v; want an error, wrapping ErrBadKey: %v", c.folder, c.parts, err, c.bad)
		}
	}
}
