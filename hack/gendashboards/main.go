// Command gendashboards writes backfill's Grafana dashboards, their export
// variants and ConfigMaps from internal/observability/dashboards. Run it
// from the repository root (make generate does).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/backfill-dev/backfill/internal/observability/dashboards"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "gendashboards: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	files, err := dashboards.Files()
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, files[p], 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return nil
}
