package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/backfill-dev/backfill/internal/version"
)

// runRoot runs the whole command tree with args and returns what it
// printed.
func runRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := NewRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestVersionCommand(t *testing.T) {
	want := version.Get()
	out, err := runRoot(t, "version")
	if err != nil {
		t.Fatalf("backfill version: %v", err)
	}
	for _, field := range []string{"Version:", want.Version, "Commit:", "Modified:", "Go:", want.GoVersion, "Platform:", want.Platform} {
		if !strings.Contains(out, field) {
			t.Errorf("backfill version printed\n%s\nwithout %q", out, field)
		}
	}
}

func TestVersionCommandJSON(t *testing.T) {
	out, err := runRoot(t, "version", "-o", "json")
	if err != nil {
		t.Fatalf("backfill version -o json: %v", err)
	}
	var got version.Info
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("backfill version -o json printed no JSON: %v\n%s", err, out)
	}
	if diff := cmp.Diff(version.Get(), got); diff != "" {
		t.Errorf("backfill version -o json (-want +got):\n%s", diff)
	}
}

func TestVersionFlag(t *testing.T) {
	out, err := runRoot(t, "--version")
	if err != nil {
		t.Fatalf("backfill --version: %v", err)
	}
	if want := "backfill " + version.Get().String() + "\n"; out != want {
		t.Errorf("backfill --version printed %q, want %q", out, want)
	}
}

func TestVersionRefusesUnknownOutput(t *testing.T) {
	_, err := runRoot(t, "version", "-o", "yaml")
	if err == nil || !isUsageError(err) || !strings.Contains(err.Error(), "-o json") {
		t.Errorf("backfill version -o yaml: got %v, want a usage error naming -o json", err)
	}
}
