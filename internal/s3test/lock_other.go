//go:build !unix

package s3test

// lockFile is a no-op where flock does not exist: parallel test processes
// may then build versitygw more than once, which is slow but harmless.
func lockFile(string) (func(), error) { return func() {}, nil }
