// Package buildinfo tells which build of databrew-stage is running.
package buildinfo

import "runtime/debug"

// Version is set at link time (-ldflags "-X .../buildinfo.Version=v1.2.3");
// otherwise it is read from the module's build information.
var Version = ""

// String returns the version, "devel" when nothing better is known.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// UserAgent is the default User-Agent: the product and its version.
func UserAgent() string { return "databrew-stage/" + String() }
