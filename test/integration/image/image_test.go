//go:build integration

package image

import (
	"archive/tar"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/backfill-dev/backfill/test/framework"
)

// nonRoot is the chart's runAsUser and runAsGroup.
const nonRoot = 65532

// chartAppVersion is charts/backfill/Chart.yaml's appVersion, the chart's
// default image tag.
func chartAppVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "charts", "backfill", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil || chart.AppVersion == "" {
		t.Fatalf("Chart.yaml has no appVersion: %v", err)
	}
	return chart.AppVersion
}

// commitTime is the time of the commit the image was built from.
func commitTime(t *testing.T) time.Time {
	t.Helper()
	when, err := time.Parse(time.RFC3339, buildVars.commitTime)
	if err != nil {
		t.Fatalf("The Makefile's COMMIT_TIME %q: %v", buildVars.commitTime, err)
	}
	return when
}

func TestArchiveManifest(t *testing.T) {
	if want := []string{"backfill:" + chartAppVersion(t)}; !cmp.Equal(built.manifest.RepoTags, want) {
		t.Errorf("The tarball tags the image %q, want %q: `docker load` names it so", built.manifest.RepoTags, want)
	}
	if got, want := "sha256:"+strings.TrimPrefix(built.manifest.Config, "sha256:"), sha256Digest(built.configRaw); got != want {
		t.Errorf("The config is stored as %s, but its digest is %s", built.manifest.Config, want)
	}
	if want := []string{sha256Digest(built.layerTar)}; built.config.RootFS.Type != "layers" || !cmp.Equal(built.config.RootFS.DiffIDs, want) {
		t.Errorf("rootfs is %+v, want the diff_ids %q of the one layer", built.config.RootFS, want)
	}
}

func TestImageConfig(t *testing.T) {
	cfg := built.config
	if cfg.OS != "linux" || cfg.Architecture != buildVars.arch {
		t.Errorf("The image is for %s/%s, want linux/%s", cfg.OS, cfg.Architecture, buildVars.arch)
	}
	if !cfg.Created.Equal(commitTime(t)) {
		t.Errorf("The image was created %v, want the commit's time %v so that one commit builds one image", cfg.Created, commitTime(t))
	}
	if want := []string{"/usr/local/bin/backfill"}; !cmp.Equal(cfg.Config.Entrypoint, want) || len(cfg.Config.Cmd) != 0 {
		t.Errorf("Entrypoint %q Cmd %q, want %q and no Cmd", cfg.Config.Entrypoint, cfg.Config.Cmd, want)
	}
	// The chart runs `command: [backfill]`: the binary's directory must be
	// on PATH.
	if !cmp.Equal(cfg.Config.Env, []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}) {
		t.Errorf("Env is %q, want only a PATH with /usr/local/bin", cfg.Config.Env)
	}
	if cfg.Config.User != "65532:65532" || cfg.Config.WorkingDir != "/" {
		t.Errorf("User %q WorkingDir %q, want 65532:65532 (the chart's runAsUser, numeric for runAsNonRoot) and /", cfg.Config.User, cfg.Config.WorkingDir)
	}
	want := map[string]string{
		"org.opencontainers.image.title":       "backfill",
		"org.opencontainers.image.description": "TFJob operator that runs TensorFlow training in the idle capacity of online Kubernetes clusters",
		"org.opencontainers.image.version":     chartAppVersion(t),
		"org.opencontainers.image.revision":    gitHead(t),
		"org.opencontainers.image.source":      "https://github.com/backfill-dev/backfill",
		"org.opencontainers.image.created":     buildVars.commitTime,
	}
	// A licenses label needs a license to name.
	if _, err := os.Stat(filepath.Join(framework.RepoRoot(), "LICENSE")); err == nil {
		want["org.opencontainers.image.licenses"] = "the LICENSE file's SPDX identifier"
	}
	if diff := cmp.Diff(want, cfg.Config.Labels); diff != "" {
		t.Errorf("Labels (-want +got):\n%s", diff)
	}
}

// TestLayerHoldsOnlyTheBinary: nothing but the binary and its parent
// directories, so the image has no shell and nothing to write to.
func TestLayerHoldsOnlyTheBinary(t *testing.T) {
	binaryName := strings.TrimPrefix(built.config.Config.Entrypoint[0], "/")
	var regular []string
	for _, hdr := range built.entries {
		if !hdr.ModTime.Equal(commitTime(t)) {
			t.Errorf("%s is dated %v, want the commit's time %v", hdr.Name, hdr.ModTime, commitTime(t))
		}
		switch {
		case hdr.Typeflag == tar.TypeDir && strings.HasPrefix(binaryName, hdr.Name):
			if hdr.Mode != 0o755 || hdr.Uid != 0 || hdr.Gid != 0 {
				t.Errorf("Directory %s has mode %o owner %d:%d, want 755 owned by root", hdr.Name, hdr.Mode, hdr.Uid, hdr.Gid)
			}
		case hdr.Typeflag == tar.TypeReg:
			regular = append(regular, hdr.Name)
			if hdr.Mode != 0o555 || hdr.Uid != nonRoot || hdr.Gid != nonRoot {
				t.Errorf("%s has mode %o owner %d:%d, want 555 owned by 65532:65532", hdr.Name, hdr.Mode, hdr.Uid, hdr.Gid)
			}
		default:
			t.Errorf("The layer holds %s (type %c), which is neither the binary nor one of its directories", hdr.Name, hdr.Typeflag)
		}
	}
	if !cmp.Equal(regular, []string{binaryName}) {
		t.Errorf("The layer's files are %q, want only the entrypoint %s", regular, binaryName)
	}
	if dirs := len(built.entries) - len(regular); dirs != strings.Count(path.Dir(binaryName), "/")+1 {
		t.Errorf("The layer has %d directories, want each parent of %s once", dirs, binaryName)
	}
}

// TestBinaryReportsItsVersion runs the image's binary on this machine: it
// names the chart's appVersion and the commit, as the labels do.
func TestBinaryReportsItsVersion(t *testing.T) {
	if buildVars.arch != runtime.GOARCH {
		t.Fatalf("The image is for %s, this machine is %s: run the suite without IMAGE_ARCH", buildVars.arch, runtime.GOARCH)
	}
	binary := filepath.Join(t.TempDir(), "backfill")
	if err := os.WriteFile(binary, built.binary, 0o555); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("backfill version -o json: %v", err)
	}
	var got struct {
		Version  string `json:"version"`
		Commit   string `json:"commit"`
		Modified bool   `json:"modified"`
		Platform string `json:"platform"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("backfill version -o json printed %q: %v", out, err)
	}
	labels := built.config.Config.Labels
	if got.Version != labels["org.opencontainers.image.version"] || got.Version != chartAppVersion(t) {
		t.Errorf("The binary says version %q, the label %q, the chart's appVersion %q", got.Version, labels["org.opencontainers.image.version"], chartAppVersion(t))
	}
	if got.Commit != labels["org.opencontainers.image.revision"] || got.Commit != gitHead(t) {
		t.Errorf("The binary says commit %q, the label %q, git HEAD %q", got.Commit, labels["org.opencontainers.image.revision"], gitHead(t))
	}
	if want := buildVars.modified == "true"; got.Modified != want {
		t.Errorf("The binary says modified=%t, the Makefile saw a tree with changes=%t", got.Modified, want)
	}
	if got.Platform != "linux/"+buildVars.arch {
		t.Errorf("The binary is for %s, want linux/%s", got.Platform, buildVars.arch)
	}
	flag, err := exec.Command(binary, "--version").Output()
	if err != nil {
		t.Fatalf("backfill --version: %v", err)
	}
	if !strings.HasPrefix(string(flag), "backfill "+chartAppVersion(t)+" (commit "+gitHead(t)[:12]) {
		t.Errorf("backfill --version printed %q, want the version and commit", flag)
	}
}

// TestOCILayout reads bin/image/oci: the same config and layer as the
// tarball, tagged with the version.
func TestOCILayout(t *testing.T) {
	dir := filepath.Join(builtDir, "oci")
	var marker struct {
		Version string `json:"imageLayoutVersion"`
	}
	readJSON(t, filepath.Join(dir, "oci-layout"), &marker)
	if marker.Version != "1.0.0" {
		t.Errorf("oci-layout says version %q, want 1.0.0", marker.Version)
	}
	type descriptor struct {
		MediaType   string            `json:"mediaType"`
		Digest      string            `json:"digest"`
		Annotations map[string]string `json:"annotations"`
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	readJSON(t, filepath.Join(dir, "index.json"), &index)
	if len(index.Manifests) != 1 {
		t.Fatalf("index.json lists %d manifests, want 1", len(index.Manifests))
	}
	m := index.Manifests[0]
	if m.MediaType != "application/vnd.oci.image.manifest.v1+json" || m.Annotations["org.opencontainers.image.ref.name"] != chartAppVersion(t) {
		t.Errorf("index.json's manifest is %+v, want an OCI manifest named %s", m, chartAppVersion(t))
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	readJSON(t, blobPath(dir, m.Digest), &manifest)
	if manifest.Config.Digest != sha256Digest(built.configRaw) {
		t.Errorf("The layout's config is %s, the tarball's %s: want one image", manifest.Config.Digest, sha256Digest(built.configRaw))
	}
	if len(manifest.Layers) != 1 || manifest.Layers[0].Digest != sha256Digest(built.layerBlob) ||
		manifest.Layers[0].MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
		t.Errorf("The layout's layers are %+v, want the tarball's one gzip layer %s", manifest.Layers, sha256Digest(built.layerBlob))
	}
	for _, d := range []string{manifest.Config.Digest, manifest.Layers[0].Digest} {
		data, err := os.ReadFile(blobPath(dir, d))
		if err != nil || sha256Digest(data) != d {
			t.Errorf("Blob %s is missing or does not match its digest: %v", d, err)
		}
	}
}

func blobPath(dir, digest string) string {
	return filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:"))
}

func readJSON(t *testing.T, file string, into any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("Reading %s: %v", file, err)
	}
}
