//go:build e2e

// Package e2e drives `backfill dev` as a user would: the binary, its
// commands and flags, the cluster they start, Prometheus's HTTP API.
package e2e

import (
	"os"
	"testing"

	"github.com/backfill-dev/backfill/test/framework"
)

// backfill is the binary under test, built once for the package.
var backfill string

func TestMain(m *testing.M) {
	os.Exit(framework.Run(m, framework.Setup{Name: "e2e", Backfill: true, APIServer: framework.NoAPIServer}, func(s *framework.Suite) error {
		backfill = s.Backfill
		return nil
	}))
}
