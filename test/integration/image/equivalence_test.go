//go:build integration

package image

import (
	"archive/tar"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/backfill-dev/backfill/test/framework"
)

// dockerBuild is the Dockerfile's stages as `docker build` with the
// documented build arguments sees them: the commit and its time given,
// the version left to the Dockerfile's default.
func dockerBuild(t *testing.T) (build, final *stage) {
	t.Helper()
	stages, err := readDockerfile(map[string]string{
		"COMMIT":   buildVars.commit,
		"CREATED":  buildVars.commitTime,
		"MODIFIED": buildVars.modified,
	})
	if err != nil {
		t.Fatalf("Reading the Dockerfile: %v", err)
	}
	if len(stages) != 2 {
		t.Fatalf("The Dockerfile has %d stages, want a Go build and the image", len(stages))
	}
	return stages[0], stages[1]
}

// TestDockerfileDescribesTheImage: the Dockerfile's final stage makes the
// config and the layer `make image` writes.
func TestDockerfileDescribesTheImage(t *testing.T) {
	build, final := dockerBuild(t)
	cfg := built.config.Config
	if final.from != "scratch" {
		t.Errorf("The final stage is FROM %s, want scratch", final.from)
	}
	if !cmp.Equal(final.entrypoint, cfg.Entrypoint) {
		t.Errorf("ENTRYPOINT %q, the image's %q", final.entrypoint, cfg.Entrypoint)
	}
	if final.user != cfg.User {
		t.Errorf("USER %q, the image's %q", final.user, cfg.User)
	}
	if final.workdir != cfg.WorkingDir {
		t.Errorf("WORKDIR %q, the image's %q", final.workdir, cfg.WorkingDir)
	}
	if !cmp.Equal(final.env, cfg.Env) {
		t.Errorf("ENV %q, the image's %q", final.env, cfg.Env)
	}
	if diff := cmp.Diff(cfg.Labels, final.labels); diff != "" {
		t.Errorf("LABELs (-image +Dockerfile):\n%s", diff)
	}
	if len(final.copies) != 1 || len(final.runs) != 0 {
		t.Fatalf("The final stage has %d COPY and %d RUN, want one COPY of the binary and nothing else", len(final.copies), len(final.runs))
	}
	c := final.copies[0]
	var binary *tar.Header
	for _, hdr := range built.entries {
		if hdr.Typeflag == tar.TypeReg {
			binary = hdr
		}
	}
	if c.from != build.name || c.dest != "/"+binary.Name {
		t.Errorf("COPY --from=%s to %s, want from the build stage %s to the image's %s", c.from, c.dest, build.name, "/"+binary.Name)
	}
	if want := strconv.Itoa(binary.Uid) + ":" + strconv.Itoa(binary.Gid); c.chown != want {
		t.Errorf("COPY --chown=%s, the image's binary is owned by %s", c.chown, want)
	}
	if mode, err := strconv.ParseInt(c.chmod, 8, 64); err != nil || mode != binary.Mode {
		t.Errorf("COPY --chmod=%s, the image's binary has mode %o", c.chmod, binary.Mode)
	}
}

// ldflagsArgument is the -ldflags "..." of a go build command line.
var ldflagsArgument = regexp.MustCompile(`-ldflags "([^"]*)"`)

// TestDockerfileBuildsTheSameBinary: the build stage's Go is go.mod's,
// named without a registry, and builds the binary the COPY takes as
// `make image` does.
func TestDockerfileBuildsTheSameBinary(t *testing.T) {
	build, final := dockerBuild(t)
	if want := "golang:" + goModGoVersion(t); build.from != want {
		t.Errorf("The build stage is FROM %s, want %s, the Go of go.mod", build.from, want)
	}
	for _, s := range []*stage{build, final} {
		if first, _, found := strings.Cut(s.from, "/"); found && strings.ContainsAny(first, ".:") {
			t.Errorf("FROM %s names a registry: leave it to the builder's configuration", s.from)
		}
	}
	if len(build.runs) == 0 {
		t.Fatal("The build stage runs nothing")
	}
	goBuild := build.runs[len(build.runs)-1]
	for _, want := range []string{"CGO_ENABLED=0", "GOOS=linux", "go build -trimpath", "./cmd/backfill", "-o " + final.copies[0].sources[0]} {
		if !strings.Contains(goBuild, want) {
			t.Errorf("The build stage's last RUN lacks %q:\n%s", want, goBuild)
		}
	}
	m := ldflagsArgument.FindStringSubmatch(goBuild)
	if m == nil || strings.Join(strings.Fields(m[1]), " ") != buildVars.ldflags {
		t.Errorf("The Dockerfile links with\n  %v\n`make image` with\n  %s", m, buildVars.ldflags)
	}
}

// TestDockerignoreKeepsWhatTheBuildReads: every package cmd/backfill
// imports from this module is in the Docker build's context.
func TestDockerignoreKeepsWhatTheBuildReads(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	var excludesAll bool
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "*":
			excludesAll = true
		case strings.HasPrefix(line, "!"):
			kept[strings.TrimSuffix(strings.TrimPrefix(line, "!"), "/")] = true
		}
	}
	if !excludesAll {
		t.Fatal(".dockerignore must start from `*` and list what the build reads, so that bin/ and .git stay out")
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if !kept[f] {
			t.Errorf(".dockerignore leaves out %s", f)
		}
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.Dir}}{{end}}{{end}}", "./cmd/backfill")
	cmd.Dir = framework.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/backfill: %v", err)
	}
	root, err := filepath.Abs(framework.RepoRoot())
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		if top, _, _ := strings.Cut(filepath.ToSlash(rel), "/"); !kept[top] {
			t.Errorf("cmd/backfill imports the package in %s, which .dockerignore leaves out of the build", rel)
		}
	}
}

// goModGoVersion is the go directive of the module's go.mod.
func goModGoVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	return string(m[1])
}
