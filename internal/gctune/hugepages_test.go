package gctune

import "testing"

func TestTHPMode(t *testing.T) {
	for _, tt := range []struct{ enabled, want string }{
		{"always [madvise] never\n", "madvise"},
		{"[always] madvise never", "always"},
		{"always madvise [never]", "never"},
		{"always madvise never", ""},
		{"", ""},
	} {
		if got := thpMode(tt.enabled); got != tt.want {
			t.Errorf("thpMode(%q) = %q, want %q", tt.enabled, got, tt.want)
		}
	}
}

func TestWantHugePages(t *testing.T) {
	for _, tt := range []struct {
		mode, godebug string
		want          bool
	}{
		{"madvise", "", true},
		{"madvise", "gctrace=1,madvdontneed=1", true},
		{"madvise", "disablethp=0", true},
		{"madvise", "gctrace=1, disablethp=1", false},
		{"always", "", false},
		{"never", "", false},
		{"", "", false},
	} {
		if got := wantHugePages(tt.mode, tt.godebug); got != tt.want {
			t.Errorf("wantHugePages(%q, %q) = %v, want %v", tt.mode, tt.godebug, got, tt.want)
		}
	}
}
