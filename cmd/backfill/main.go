// Command backfill runs TensorFlow training in the idle capacity of online
// Kubernetes clusters: the TFJob operator (backfill manager), the local
// cluster (backfill dev) and the kubectl-style tools. Installed as
// kubectl-backfill it is a kubectl plugin.
package main

import (
	"os"

	// The image is built from scratch, with no CA bundle: the alert relay
	// and the manager verify HTTPS peers with Mozilla's roots built in,
	// which Go uses only where the system has none.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/backfill-dev/backfill/internal/cli"
)

func main() {
	os.Exit(cli.Execute())
}
