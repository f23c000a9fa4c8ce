// Command build writes the stage's container image tarball (see package
// image): make image runs it on a static binary it built.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/databrew/databrew-stage/internal/image"
)

func main() {
	bin := flag.String("bin", "", "the static linux/amd64 binary to ship")
	out := flag.String("o", "bin/databrew-stage-image.tar", "the image tarball to write")
	tag := flag.String("tag", "databrew-stage:latest", "the image's name and tag")
	version := flag.String("version", "devel", "the version label")
	certs := flag.String("ca-certs", image.CACertsPath, `the CA certificate bundle to ship ("" for none)`)
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "build: -bin is required")
		os.Exit(2)
	}
	if *certs != "" {
		if _, err := os.Stat(*certs); err != nil {
			fmt.Fprintf(os.Stderr, "build: no CA certificates at %s (install ca-certificates, or pass -ca-certs \"\")\n", *certs)
			os.Exit(1)
		}
	}
	if err := image.Write(image.Spec{Binary: *bin, CACerts: *certs, Tag: *tag, Version: *version}, *out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s (%s): docker load -i %s, or podman load -i %s\n", *out, *tag, *out, *out)
}
