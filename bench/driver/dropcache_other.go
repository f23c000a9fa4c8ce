//go:build !linux

package main

// dropCache does nothing here: cgroups are Linux's.
func dropCache(string) {}
