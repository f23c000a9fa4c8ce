//go:build !linux

package gctune

// applyHugePages does nothing: transparent huge pages are Linux's.
func applyHugePages() {}
