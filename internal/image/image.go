// Package image builds the stage's container image without a container
// engine: one layer over an empty base holding the static binary, a
// non-root user, CA certificates and /data for state and exports, written
// as a tarball that `docker load`, `podman load` and registries' upload
// tools take (go-containerregistry writes it).
package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The image's layout.
const (
	// BinaryPath is where the binary is, the entrypoint.
	BinaryPath = "/usr/local/bin/databrew-stage"
	// DataDir is the working directory and the volume for state and
	// exports, owned by the image's user.
	DataDir = "/data"
	// UID and GID are the image's non-root user and group, "databrew".
	UID, GID = 65532, 65532
	// CACertsPath is where the CA certificates are, for HTTPS and object
	// storage.
	CACertsPath = "/etc/ssl/certs/ca-certificates.crt"
)

// Spec says what goes into the image.
type Spec struct {
	// Binary is the path of the static linux binary to ship.
	Binary string
	// CACerts is the path of a CA certificate bundle to ship; "" ships
	// none.
	CACerts string
	// Tag names the image in the tarball ("databrew-stage:v1.2.3").
	Tag string
	// Version labels the image.
	Version string
	// Created is the image's creation time; the zero time gives
	// reproducible images.
	Created time.Time
}

// Build builds the image Spec says.
func Build(s Spec) (v1.Image, error) {
	layer, err := layerOf(s)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, fmt.Errorf("image: add the layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image: config: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Created = v1.Time{Time: s.Created}
	cfg.Config.Entrypoint = []string{BinaryPath}
	cfg.Config.Cmd = []string{"--help"}
	cfg.Config.User = fmt.Sprintf("%d:%d", UID, GID)
	cfg.Config.WorkingDir = DataDir
	cfg.Config.Volumes = map[string]struct{}{DataDir: {}}
	cfg.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	if s.CACerts != "" {
		cfg.Config.Env = append(cfg.Config.Env, "SSL_CERT_FILE="+CACertsPath)
	}
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":   "databrew-stage",
		"org.opencontainers.image.version": s.Version,
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("image: set the config: %w", err)
	}
	return img, nil
}

// Write builds the image and writes it as a tarball at path.
func Write(s Spec, path string) error {
	img, err := Build(s)
	if err != nil {
		return err
	}
	tag, err := name.NewTag(s.Tag, name.WeakValidation)
	if err != nil {
		return fmt.Errorf("image: tag %q: %w", s.Tag, err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("image: write %s: %w", path, err)
	}
	return nil
}

// layerOf is the image's one layer.
func layerOf(s Spec) (v1.Layer, error) {
	bin, err := os.ReadFile(s.Binary)
	if err != nil {
		return nil, fmt.Errorf("image: read the binary: %w", err)
	}
	var certs []byte
	if s.CACerts != "" {
		if certs, err = os.ReadFile(s.CACerts); err != nil {
			return nil, fmt.Errorf("image: read the CA certificates: %w", err)
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := []string{"etc", "etc/ssl", "etc/ssl/certs", "usr", "usr/local", "usr/local/bin"}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: s.Created}); err != nil {
			return nil, err
		}
	}
	for _, d := range []struct {
		name string
		mode int64
		uid  int
	}{{"data/", 0o755, UID}, {"tmp/", 0o1777, 0}} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d.name, Mode: d.mode, Uid: d.uid, Gid: d.uid, ModTime: s.Created}); err != nil {
			return nil, err
		}
	}
	files := []struct {
		name string
		mode int64
		data []byte
	}{
		{"etc/passwd", 0o644, fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\ndatabrew:x:%d:%d:databrew:%s:/sbin/nologin\n", UID, GID, DataDir)},
		{"etc/group", 0o644, fmt.Appendf(nil, "root:x:0:\ndatabrew:x:%d:\n", GID)},
		{BinaryPath[1:], 0o755, bin},
	}
	if certs != nil {
		files = append(files, struct {
			name string
			mode int64
			data []byte
		}{CACertsPath[1:], 0o644, certs})
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: s.Created}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		return nil, fmt.Errorf("image: layer: %w", err)
	}
	return layer, nil
}
