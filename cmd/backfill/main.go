// Command backfill runs TensorFlow training in the idle capacity of online
// Kubernetes clusters: the TFJob operator (backfill manager), the local
// cluster (backfill dev) and the kubectl-style tools. Installed as
// kubectl-backfill it is a kubectl plugin.
package main

import (
	"os"

	"github.com/backfill-dev/backfill/internal/cli"
)

func main() {
	os.Exit(cli.Execute())
}
