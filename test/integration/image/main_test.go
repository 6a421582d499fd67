//go:build integration

// Package image proves backfill's container image what the chart and the
// docs say it is. It builds the image once as `make image` does (the
// Makefile's static build and hack/tools/image) and reads the
// docker-archive tarball and the OCI layout with archive/tar and
// encoding/json alone, independently of the code that wrote them: one
// layer holding only the binary at the entrypoint, read-only and owned by
// the non-root user 65532, the OCI labels naming the chart's appVersion
// and the git commit, and the binary inside reporting the same version
// and commit. It parses the repository's Dockerfile, which is never run
// here, and proves its final stage describes the same image; it proves two
// builds of one commit byte-identical, and that every container the chart
// runs from the image finds its command and flags in the binary there.
package image

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backfill-dev/backfill/test/framework"
)

// built is the image TestMain builds, read back; builtDir holds its
// outputs.
var (
	built    *archive
	builtDir string
)

// buildVars are the Makefile's view of this build.
var buildVars makeVars

// makeVars are the Makefile variables an image build stamps.
type makeVars struct {
	version, commit, modified, commitTime, ldflags, arch string
}

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Setup{Name: "image", APIServer: framework.NoAPIServer}, func(s *framework.Suite) error {
		var err error
		if buildVars, err = readMakeVars(); err != nil {
			return err
		}
		builtDir = filepath.Join(s.Logs, "first")
		if err := makeImage(builtDir); err != nil {
			return err
		}
		built, err = readArchive(filepath.Join(builtDir, "backfill.tar"))
		return err
	}))
}

// makeImage runs `make image` with its outputs in dir.
func makeImage(dir string) error {
	cmd := exec.Command("make", "--no-print-directory", "-C", framework.RepoRoot(), "image", "IMAGE_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("make image: %w\n%s", err, out)
	}
	return nil
}

// readMakeVars asks make for the variables it stamps into the build.
func readMakeVars() (makeVars, error) {
	names := []string{"VERSION", "COMMIT", "TREE_MODIFIED", "COMMIT_TIME", "IMAGE_LDFLAGS", "IMAGE_ARCH"}
	echoes := make([]string, len(names))
	for i, name := range names {
		echoes[i] = fmt.Sprintf("echo '$(%s)'", name)
	}
	cmd := exec.Command("make", "-s", "--no-print-directory", "-C", framework.RepoRoot(),
		"--eval", "print-image-vars: ; @"+strings.Join(echoes, "; "), "print-image-vars")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return makeVars{}, fmt.Errorf("reading the Makefile's variables: %w\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		return makeVars{}, fmt.Errorf("make printed %q, want one line for each of %v", out, names)
	}
	return makeVars{version: lines[0], commit: lines[1], modified: lines[2], commitTime: lines[3], ldflags: lines[4], arch: lines[5]}, nil
}

// gitHead is the commit the test runs at.
func gitHead(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "-C", framework.RepoRoot(), "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	return strings.TrimSpace(string(out))
}
