//go:build !unix

package testserver

// lockFile is a no-op where flock does not exist: parallel test processes
// may then install a program more than once, which is slow but harmless.
func lockFile(string) (func(), error) { return func() {}, nil }
