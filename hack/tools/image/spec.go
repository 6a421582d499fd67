package main

import "fmt"

// What the image is. The Dockerfile at the repository's root says the
// same; test/integration/image fails when the two differ.
const (
	// binaryPath is where the binary lives: on the PATH below, so that the
	// chart's `command: [backfill]` finds it.
	binaryPath = "/usr/local/bin/backfill"
	// nonRootID is the user and group the image runs as, the chart's
	// runAsUser and runAsGroup.
	nonRootID = 65532
	// path is the PATH Docker gives an image built FROM scratch.
	pathEnv = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	// source is where the image's code lives.
	source      = "https://github.com/backfill-dev/backfill"
	title       = "backfill"
	description = "TFJob operator that runs TensorFlow training in the idle capacity of online Kubernetes clusters"
)

// user is the image's USER, numeric so that Kubernetes can verify
// runAsNonRoot without an /etc/passwd.
var user = fmt.Sprintf("%d:%d", nonRootID, nonRootID)

// labels are the image's OCI annotations (the repository has no LICENSE
// file, so there is no licenses label).
func labels(opts options) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       title,
		"org.opencontainers.image.description": description,
		"org.opencontainers.image.version":     opts.version,
		"org.opencontainers.image.revision":    opts.revision,
		"org.opencontainers.image.source":      source,
		"org.opencontainers.image.created":     opts.createdText,
	}
}
