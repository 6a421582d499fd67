//go:build integration

package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"
)

// archive is a docker-archive tarball as `docker load` reads it, holding
// one image.
type archive struct {
	manifest  archiveEntry
	configRaw []byte
	config    imageConfig
	// layerBlob is the one layer as stored (gzip), layerTar uncompressed.
	layerBlob, layerTar []byte
	entries             []*tar.Header
	// binary is the content of the layer's one regular file, binaryPath
	// its path in the layer (no leading slash).
	binary     []byte
	binaryPath string
}

// archiveEntry is one image of manifest.json.
type archiveEntry struct {
	Config   string   `json:"Config"`
	RepoTags []string `json:"RepoTags"`
	Layers   []string `json:"Layers"`
}

// imageConfig is the part of the image config the runtime acts on.
type imageConfig struct {
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	Created      time.Time `json:"created"`
	Config       struct {
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		User       string            `json:"User"`
		Env        []string          `json:"Env"`
		WorkingDir string            `json:"WorkingDir"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// readArchive reads a docker-archive tarball of one image with one layer.
func readArchive(file string) (*archive, error) {
	files, err := tarFiles(file)
	if err != nil {
		return nil, err
	}
	var manifest []archiveEntry
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		return nil, fmt.Errorf("reading manifest.json: %w", err)
	}
	if len(manifest) != 1 || len(manifest[0].Layers) != 1 {
		return nil, fmt.Errorf("manifest.json is %+v, want one image of one layer", manifest)
	}
	a := &archive{manifest: manifest[0], configRaw: files[manifest[0].Config], layerBlob: files[manifest[0].Layers[0]]}
	if a.configRaw == nil || a.layerBlob == nil {
		return nil, fmt.Errorf("the tarball lacks the config %s or the layer %s that manifest.json names", manifest[0].Config, manifest[0].Layers[0])
	}
	if err := json.Unmarshal(a.configRaw, &a.config); err != nil {
		return nil, fmt.Errorf("reading the config: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(a.layerBlob))
	if err != nil {
		return nil, fmt.Errorf("the layer is not gzip: %w", err)
	}
	if a.layerTar, err = io.ReadAll(zr); err != nil {
		return nil, fmt.Errorf("unpacking the layer: %w", err)
	}
	tr := tar.NewReader(bytes.NewReader(a.layerTar))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the layer: %w", err)
		}
		a.entries = append(a.entries, hdr)
		if hdr.Typeflag == tar.TypeReg {
			a.binaryPath = strings.TrimPrefix(path.Clean(hdr.Name), "/")
			if a.binary, err = io.ReadAll(tr); err != nil {
				return nil, fmt.Errorf("reading %s from the layer: %w", hdr.Name, err)
			}
		}
	}
	return a, nil
}

// tarFiles is every regular file of a tar file by name.
func tarFiles(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		if files[hdr.Name], err = io.ReadAll(tr); err != nil {
			return nil, fmt.Errorf("reading %s in %s: %w", hdr.Name, path, err)
		}
	}
}

// sha256Digest is data's digest as OCI writes it.
func sha256Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
