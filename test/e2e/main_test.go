//go:build e2e

// Package e2e drives `backfill dev` as a user would: the binary, its
// commands and flags, the cluster they start, Prometheus's HTTP API.
package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/backfill-dev/backfill/test/framework"
)

// backfill is the binary under test, built once for the package.
var backfill string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "backfill-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if backfill, err = framework.BuildBackfill(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
