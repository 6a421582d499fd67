// Package version tells which build of backfill is running: the release
// version, the commit it was built from, whether that tree had changes,
// and the Go toolchain.
//
// Release builds (`make build`, `make image`, the Dockerfile) set the
// version, commit and modified flag with -ldflags -X; the version always
// comes from charts/backfill/Chart.yaml's appVersion, so that the chart's
// default image tag and the binary inside it agree. A plain `go build`
// falls back to what the Go toolchain stamped into the binary: the
// module's version for `go install ...@vX`, the VCS revision when it
// built from a git checkout, else "dev".
package version

import (
	"runtime"
	"runtime/debug"
	"strconv"
)

// Set with -ldflags "-X github.com/backfill-dev/backfill/internal/version.version=...":
// strings, as -X sets nothing else.
var (
	version  string
	commit   string
	modified string
)

// Dev is the version of a build that was given none.
const Dev = "dev"

// Info is what `backfill version` prints.
type Info struct {
	// Version is the release version, e.g. "0.1.0", or "dev".
	Version string `json:"version"`
	// Commit is the git commit the binary was built from; empty when unknown.
	Commit string `json:"commit,omitempty"`
	// Modified is true when the tree had uncommitted changes.
	Modified bool `json:"modified"`
	// GoVersion is the toolchain that built the binary, e.g. "go1.26.7".
	GoVersion string `json:"goVersion"`
	// Platform is the binary's OS and architecture, e.g. "linux/amd64".
	Platform string `json:"platform"`
}

// Get is this binary's build information.
func Get() Info {
	build, _ := debug.ReadBuildInfo()
	return resolve(version, commit, modified, build)
}

// resolve prefers the values given by -ldflags and fills the rest from
// the toolchain's build information (nil when there is none).
func resolve(version, commit, modified string, build *debug.BuildInfo) Info {
	info := Info{
		Version:   version,
		Commit:    commit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	info.Modified, _ = strconv.ParseBool(modified)
	if build == nil {
		build = &debug.BuildInfo{}
	}
	if build.GoVersion != "" {
		info.GoVersion = build.GoVersion
	}
	if info.Version == "" {
		info.Version = moduleVersion(build)
	}
	if info.Commit == "" {
		info.Commit = setting(build, "vcs.revision")
		info.Modified = setting(build, "vcs.modified") == "true"
	}
	return info
}

// moduleVersion is the main module's version as `go install module@vX`
// records it, without the leading v; Dev for a build from a checkout.
func moduleVersion(build *debug.BuildInfo) string {
	v := build.Main.Version
	if v == "" || v == "(devel)" {
		return Dev
	}
	if v[0] == 'v' {
		return v[1:]
	}
	return v
}

// setting is one key of the toolchain's build settings, "" when absent.
func setting(build *debug.BuildInfo, key string) string {
	for _, s := range build.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// String is the one-line form, as `backfill --version` prints it:
// "0.1.0 (commit 5e59dbf5fe27, modified, go1.26.7 linux/amd64)".
func (i Info) String() string {
	s := i.Version + " ("
	if i.Commit != "" {
		s += "commit " + short(i.Commit)
		if i.Modified {
			s += ", modified"
		}
		s += ", "
	}
	return s + i.GoVersion + " " + i.Platform + ")"
}

// short is a commit's first 12 hex digits, as git abbreviates in long
// histories.
func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
