package image

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestTheImageRunsTheStageFromItsOwnFilesystem builds the static binary,
// the image tarball around it, reads the tarball back, unpacks the
// image's filesystem and runs the binary from it: its version, and the
// demo, with the image's working directory as the demo's.
func TestTheImageRunsTheStageFromItsOwnFilesystem(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the image is linux/amd64")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "databrew-stage")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X github.com/databrew/databrew-stage/internal/buildinfo.Version=v0.0.0-imagetest",
		"-o", bin, "../../cmd/databrew-stage")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	certs := CACertsPath
	if _, err := os.Stat(certs); err != nil {
		certs = ""
	}
	tarPath := filepath.Join(dir, "image.tar")
	if err := Write(Spec{Binary: bin, CACerts: certs, Tag: "databrew-stage:imagetest", Version: "v0.0.0-imagetest"}, tarPath); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(tarPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Config
	if c.User != "65532:65532" || c.WorkingDir != DataDir || len(c.Entrypoint) != 1 || c.Entrypoint[0] != BinaryPath || cfg.OS != "linux" {
		t.Fatalf("image config %+v", cfg)
	}
	if _, ok := c.Volumes[DataDir]; !ok {
		t.Fatalf("no volume at %s: %+v", DataDir, c.Volumes)
	}
	root := filepath.Join(dir, "root")
	users := unpack(t, img, root)
	if owner, ok := users[DataDir[1:]]; !ok || owner != UID {
		t.Fatalf("%s is owned by %d (%v), want the image's user %d; dirs %v", DataDir, owner, ok, UID, users)
	}
	self := filepath.Join(root, BinaryPath)
	if out, err := exec.Command(self, "version").CombinedOutput(); err != nil || !strings.Contains(string(out), "v0.0.0-imagetest") {
		t.Fatalf("version from the image: %v\n%s", err, out)
	}
	if out, err := exec.Command("ldd", self).CombinedOutput(); err == nil && !strings.Contains(string(out), "not a dynamic executable") {
		t.Fatalf("the binary is dynamically linked:\n%s", out)
	}
	demo := exec.Command(self, "demo", "--items", "20")
	demo.Dir = filepath.Join(root, DataDir)
	if out, err := demo.CombinedOutput(); err != nil || !strings.Contains(string(out), "Run 2: only the new and changed items are published.") {
		t.Fatalf("demo from the image: %v\n%s", err, out)
	}
}

// unpack writes the image's filesystem under root and returns the owner
// of each directory.
func unpack(t *testing.T, img v1.Image, root string) map[string]int {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	owners := map[string]int{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return owners
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			owners[strings.TrimSuffix(strings.TrimPrefix(h.Name, "./"), "/")] = h.Uid
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode)&0o777)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
}
