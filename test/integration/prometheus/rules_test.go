//go:build integration

package prometheus

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backfill-dev/backfill/internal/observability/rules"
	"github.com/backfill-dev/backfill/test/framework"
)

// TestRuleFilesPassPromtool runs promtool check rules on the checked-in
// rule files, and checks that they are what the rules package generates
// now (else `make generate` is due).
func TestRuleFilesPassPromtool(t *testing.T) {
	promtool := binary(t, "promtool")
	want, err := rules.RuleFile(rules.Groups())
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, g := range rules.Groups() {
		count += len(g.Alerts)
	}
	wantFound := fmt.Sprintf("SUCCESS: %d rules found", count)
	for _, rel := range []string{"deploy/monitoring/backfill.rules.yaml", "charts/backfill/files/backfill.rules.yaml"} {
		path := filepath.Join(framework.RepoRoot(), rel)
		out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput()
		if err != nil {
			t.Errorf("promtool check rules %s: %v\n%s", rel, err, out)
		}
		if !strings.Contains(string(out), wantFound) {
			t.Errorf("promtool check rules %s: want %q, got:\n%s", rel, wantFound, out)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s is not what internal/observability/rules generates: run `make generate`", rel)
		}
	}
}
