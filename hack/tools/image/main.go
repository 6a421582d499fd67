// Command image writes backfill's container image with no container daemon
// and no base image: one layer holding the statically built binary on top
// of nothing (FROM scratch), run as the non-root user 65532. `make image`
// builds the binary and runs it; the repository's Dockerfile describes the
// same image for those who build with Docker, and test/integration/image
// proves the two equal.
//
// It writes a docker-archive tarball (what docker load, podman load,
// ctr images import and crane push read) and an OCI layout directory.
// Every time in the image is the commit's, so one commit builds one
// byte-identical image.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

// options are the command line's flags.
type options struct {
	binary   string
	out      string
	arch     string
	version  string
	revision string
	created  time.Time
	// createdText is -created as given, the created label, as a Dockerfile
	// build argument would set it.
	createdText string
	repository  string
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	opts, err := parseOptions(args)
	if err != nil {
		return err
	}
	binary, err := os.ReadFile(opts.binary)
	if err != nil {
		return fmt.Errorf("reading the binary: %w (build it with `make image`)", err)
	}
	img, err := buildImage(binary, opts)
	if err != nil {
		return err
	}
	written, err := writeOutputs(img, opts)
	if err != nil {
		return err
	}
	return printSummary(stdout, img, written, opts)
}

func parseOptions(args []string) (options, error) {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	var opts options
	var created string
	fs.StringVar(&opts.binary, "binary", "", "the static linux binary of backfill (CGO_ENABLED=0)")
	fs.StringVar(&opts.out, "out", "", "directory to write backfill.tar and oci/ into")
	fs.StringVar(&opts.arch, "arch", runtime.GOARCH, "the binary's architecture (GOARCH): amd64, arm64, ppc64le, s390x or riscv64")
	fs.StringVar(&opts.version, "version", "", "the release version, charts/backfill/Chart.yaml's appVersion; also the image's tag")
	fs.StringVar(&opts.revision, "revision", "", "the git commit the binary was built from")
	fs.StringVar(&created, "created", "", "the commit's time, RFC 3339 (git log -1 --format=%cI): the image's only time")
	fs.StringVar(&opts.repository, "repository", "backfill", "the repository name the tarball tags the image with, as the chart's default image.repository")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q: every input is a flag (see -help)", fs.Args())
	}
	for flagName, value := range map[string]string{"-binary": opts.binary, "-out": opts.out, "-version": opts.version, "-revision": opts.revision, "-created": created} {
		if value == "" {
			return options{}, fmt.Errorf("%s is required; `make image` sets every flag", flagName)
		}
	}
	if _, ok := supportedArchs[opts.arch]; !ok {
		return options{}, fmt.Errorf("-arch %q is not supported: use amd64, arm64, ppc64le, s390x or riscv64", opts.arch)
	}
	t, err := time.Parse(time.RFC3339, created)
	if err != nil {
		return options{}, fmt.Errorf("-created %q is not an RFC 3339 time such as 2026-01-02T15:04:05Z: %w", created, err)
	}
	opts.created, opts.createdText = t.UTC(), created
	return opts, nil
}

// supportedArchs are the GOARCH values that are OCI architectures as they
// are and need no variant.
var supportedArchs = map[string]struct{}{"amd64": {}, "arm64": {}, "ppc64le": {}, "s390x": {}, "riscv64": {}}
