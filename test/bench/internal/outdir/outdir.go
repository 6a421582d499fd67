// Package outdir is where a bench writes its files: the directory of its
// -out flag, or a new temporary one.
package outdir

import (
	"fmt"
	"os"
)

// Make returns dir, made if missing; a new temporary directory named after
// prefix when dir is empty, so that a run never writes into the repository
// unasked.
func Make(dir, prefix string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", prefix)
		if err != nil {
			return "", fmt.Errorf("making a temporary directory for the output (set -out): %w", err)
		}
		return d, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("-out=%s: %w", dir, err)
	}
	return dir, nil
}
