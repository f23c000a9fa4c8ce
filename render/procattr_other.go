//go:build !linux

package render

import "os/exec"

// ownGroup leaves the browser's process attributes alone where there is no
// parent-death signal; the stage is built for Linux.
func ownGroup(*exec.Cmd) {}

// killGroup does nothing where ownGroup made no group: chromedp kills the
// browser when its context ends.
func killGroup(int) {}
