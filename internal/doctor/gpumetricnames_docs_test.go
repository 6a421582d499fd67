package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// gpuRenamesHeader opens the table of docs/observability.md that lists
// gpuMetricRenames.
const gpuRenamesHeader = "| name no exporter emits | DCGM name to use | unit | note |"

// gpuRenamesMarkdown is gpuMetricRenames as the docs' table.
func gpuRenamesMarkdown() []string {
	lines := []string{gpuRenamesHeader, "|---|---|---|---|"}
	for _, r := range gpuMetricRenames {
		lines = append(lines, fmt.Sprintf("| `%s` | `%s` | %s | %s |", r.Old, r.DCGM, r.Unit, r.Note))
	}
	return lines
}

// The docs' table of GPU metric names is the check's table, row for row.
func TestGPUMetricRenamesMatchTheDocs(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "docs", "observability.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(text), "\n")
	start := slices.Index(lines, gpuRenamesHeader)
	if start < 0 {
		t.Fatalf("docs/observability.md has no table with the header %q; add it under ### GPU metric names:\n%s", gpuRenamesHeader, strings.Join(gpuRenamesMarkdown(), "\n"))
	}
	end := start
	for end < len(lines) && strings.HasPrefix(lines[end], "|") {
		end++
	}
	if diff := cmp.Diff(gpuRenamesMarkdown(), lines[start:end]); diff != "" {
		t.Errorf("docs/observability.md's GPU metric names differ from gpuMetricRenames (-code +docs):\n%s\nthe table from the code:\n%s", diff, strings.Join(gpuRenamesMarkdown(), "\n"))
	}
}

// Every old name is a name the tokenizer reads whole, appears once, and
// maps to a DCGM field name.
func TestGPUMetricRenamesAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range gpuMetricRenames {
		if seen[r.Old] {
			t.Errorf("%s is listed twice", r.Old)
		}
		seen[r.Old] = true
		if got := oldGPUNamesIn(r.Old); !slices.Equal(got, []string{r.Old}) {
			t.Errorf("oldGPUNamesIn(%q) = %v, want the name itself", r.Old, got)
		}
		if !strings.HasPrefix(r.DCGM, "DCGM_FI_") || r.Unit == "" || r.Note == "" {
			t.Errorf("%s: want a DCGM_FI_ name, a unit and a note, got %+v", r.Old, r)
		}
	}
}
