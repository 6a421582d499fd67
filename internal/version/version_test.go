package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestResolve(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.26.7", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "5e59dbf5fe279a54d903ab22fa5088ff4d24bb62"},
		{Key: "vcs.modified", Value: "true"},
	}}
	tests := map[string]struct {
		version, commit, modified string
		build                     *debug.BuildInfo
		want                      Info
	}{
		"release build: ldflags win over the toolchain's stamp": {
			version: "0.1.0", commit: "abc", modified: "false", build: vcs,
			want: Info{Version: "0.1.0", Commit: "abc", GoVersion: "go1.26.7"},
		},
		"release build of a changed tree": {
			version: "0.1.0", commit: "abc", modified: "true", build: vcs,
			want: Info{Version: "0.1.0", Commit: "abc", Modified: true, GoVersion: "go1.26.7"},
		},
		"go build in a checkout: the toolchain's VCS stamp": {
			build: vcs,
			want:  Info{Version: Dev, Commit: "5e59dbf5fe279a54d903ab22fa5088ff4d24bb62", Modified: true, GoVersion: "go1.26.7"},
		},
		"go install module@v0.2.0": {
			build: &debug.BuildInfo{GoVersion: "go1.26.7", Main: debug.Module{Version: "v0.2.0"}},
			want:  Info{Version: "0.2.0", GoVersion: "go1.26.7"},
		},
		"no build information at all": {
			want: Info{Version: Dev},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := resolve(tc.version, tc.commit, tc.modified, tc.build)
			if tc.want.GoVersion == "" {
				tc.want.GoVersion = got.GoVersion // runtime.Version() of this test binary
			}
			tc.want.Platform = got.Platform
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("resolve() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestString(t *testing.T) {
	tests := map[string]struct {
		info Info
		want string
	}{
		"clean":    {Info{Version: "0.1.0", Commit: "5e59dbf5fe279a54d903ab22fa5088ff4d24bb62", GoVersion: "go1.26.7", Platform: "linux/amd64"}, "0.1.0 (commit 5e59dbf5fe27, go1.26.7 linux/amd64)"},
		"modified": {Info{Version: "0.1.0", Commit: "5e59dbf", Modified: true, GoVersion: "go1.26.7", Platform: "linux/arm64"}, "0.1.0 (commit 5e59dbf, modified, go1.26.7 linux/arm64)"},
		"unknown":  {Info{Version: Dev, GoVersion: "go1.26.7", Platform: "linux/amd64"}, "dev (go1.26.7 linux/amd64)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.info.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestMakefileVersionIsChartAppVersion proves the release version has one
// source: the version the Makefile stamps into builds is the chart's
// appVersion, which is also the chart's default image tag.
func TestMakefileVersionIsChartAppVersion(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "charts", "backfill", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil {
		t.Fatalf("Reading Chart.yaml: %v", err)
	}
	if chart.AppVersion == "" {
		t.Fatal("Chart.yaml has no appVersion")
	}
	// Print the Makefile's variable without adding a target for it.
	cmd := exec.Command("make", "-s", "--no-print-directory", "-C", root,
		"--eval", "print-release-version: ; @echo '$(VERSION)'", "print-release-version")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make print-release-version: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != chart.AppVersion {
		t.Errorf("The Makefile stamps version %q, Chart.yaml's appVersion is %q: the Makefile must read it from Chart.yaml", got, chart.AppVersion)
	}
}
