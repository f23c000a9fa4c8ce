//go:build !linux

package exeadvice

// Apply does nothing outside Linux.
func Apply() error { return nil }
