//go:build integration

package image

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBuildIsReproducible builds the image a second time: the same commit
// makes a byte-identical tarball and OCI layout index.
func TestBuildIsReproducible(t *testing.T) {
	again := filepath.Join(t.TempDir(), "again")
	if err := makeImage(again); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"backfill.tar", filepath.Join("oci", "index.json")} {
		first, err := os.ReadFile(filepath.Join(builtDir, name))
		if err != nil {
			t.Fatal(err)
		}
		second, err := os.ReadFile(filepath.Join(again, name))
		if err != nil {
			t.Fatal(err)
		}
		if sha256Digest(first) != sha256Digest(second) {
			t.Errorf("Two builds of one commit wrote different %s: %s and %s", name, sha256Digest(first), sha256Digest(second))
		}
	}
}
