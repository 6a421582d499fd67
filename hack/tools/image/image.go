package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// buildImage is the binary's layer on an empty base, with OCI media types
// and the config of spec.go.
func buildImage(binary []byte, opts options) (v1.Image, error) {
	layerTar, err := binaryLayer(binary, opts.created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("making the layer: %w", err)
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   v1.Time{Time: opts.created},
			CreatedBy: "COPY backfill " + binaryPath,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("adding the layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the config: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", opts.arch
	cfg.Created = v1.Time{Time: opts.created}
	cfg.Config = v1.Config{
		Entrypoint: []string{binaryPath},
		User:       user,
		Env:        []string{pathEnv},
		WorkingDir: "/",
		Labels:     labels(opts),
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("setting the config: %w", err)
	}
	return img, nil
}

// binaryLayer is the layer's tar: the binary's parent directories, owned
// by root, and the binary, read-only and owned by the non-root user, every
// entry dated at the commit.
func binaryLayer(binary []byte, created time.Time) ([]byte, error) {
	created = created.Truncate(time.Second)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	name := strings.TrimPrefix(binaryPath, "/")
	var dirs []string
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		dirs = append([]string{dir + "/"}, dirs...)
	}
	for _, dir := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: created, Format: tar.FormatUSTAR}); err != nil {
			return nil, fmt.Errorf("writing the layer: %w", err)
		}
	}
	hdr := &tar.Header{
		Typeflag: tar.TypeReg, Name: name, Mode: 0o555, Size: int64(len(binary)),
		Uid: nonRootID, Gid: nonRootID, ModTime: created, Format: tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("writing the layer: %w", err)
	}
	if _, err := tw.Write(binary); err != nil {
		return nil, fmt.Errorf("writing the layer: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("writing the layer: %w", err)
	}
	return buf.Bytes(), nil
}
