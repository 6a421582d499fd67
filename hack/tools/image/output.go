package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Names of the outputs inside -out.
const (
	archiveName = "backfill.tar"
	layoutName  = "oci"
)

// outputs are the paths written.
type outputs struct {
	archive, layout string
	archiveBytes    int64
}

// writeOutputs writes the docker-archive tarball and, replacing any
// earlier one, the OCI layout.
func writeOutputs(img v1.Image, opts options) (outputs, error) {
	w := outputs{archive: filepath.Join(opts.out, archiveName), layout: filepath.Join(opts.out, layoutName)}
	tag, err := name.NewTag(opts.repository + ":" + opts.version)
	if err != nil {
		return outputs{}, fmt.Errorf("-repository %q and -version %q make no image name: %w", opts.repository, opts.version, err)
	}
	if err := os.MkdirAll(opts.out, 0o755); err != nil {
		return outputs{}, err
	}
	if err := tarball.WriteToFile(w.archive, tag, img); err != nil {
		return outputs{}, fmt.Errorf("writing %s: %w", w.archive, err)
	}
	info, err := os.Stat(w.archive)
	if err != nil {
		return outputs{}, err
	}
	w.archiveBytes = info.Size()
	if err := os.RemoveAll(w.layout); err != nil {
		return outputs{}, err
	}
	p, err := layout.Write(w.layout, empty.Index)
	if err != nil {
		return outputs{}, fmt.Errorf("writing %s: %w", w.layout, err)
	}
	ref := layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": opts.version})
	if err := p.AppendImage(img, ref); err != nil {
		return outputs{}, fmt.Errorf("writing %s: %w", w.layout, err)
	}
	return w, nil
}

// printSummary says what was written and how to get it into a registry
// or onto a node.
func printSummary(out io.Writer, img v1.Image, w outputs, opts options) error {
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	local := opts.repository + ":" + opts.version
	remote := "registry.example.com/platform/backfill:" + opts.version
	fmt.Fprintf(out, `Wrote the image %s (linux/%s, manifest %s):
  %s  docker-archive, %d bytes
  %s  OCI layout, tag %s

Push it to your registry with one of:
  crane push %s %s
  docker load -i %s && docker tag %s %s && docker push %s
  podman load -i %s && podman push %s %s
or import it straight into a node's containerd:
  ctr -n k8s.io images import %s
then install with --set image.repository=registry.example.com/platform/backfill
`, local, opts.arch, digest, w.archive, w.archiveBytes, w.layout, opts.version,
		w.archive, remote,
		w.archive, local, remote, remote,
		w.archive, local, remote,
		w.archive)
	return nil
}
