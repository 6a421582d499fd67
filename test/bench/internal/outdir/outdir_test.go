package outdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMake(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	d, err := Make("", "bench-test-")
	if err != nil || filepath.Dir(d) != tmp || !strings.HasPrefix(filepath.Base(d), "bench-test-") {
		t.Errorf("Make(\"\") = %q, %v; want a new bench-test-* directory in %s", d, err, tmp)
	}
	want := filepath.Join(tmp, "a", "b")
	if d, err := Make(want, "bench-test-"); err != nil || d != want {
		t.Errorf("Make(%q) = %q, %v", want, d, err)
	}
	if st, err := os.Stat(want); err != nil || !st.IsDir() {
		t.Errorf("%s not made: %v", want, err)
	}
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Make(filepath.Join(file, "x"), "bench-test-"); err == nil || !strings.Contains(err.Error(), "-out=") {
		t.Errorf("under a file: error %v, want one naming -out", err)
	}
}
