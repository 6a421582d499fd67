package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/backfill-dev/backfill/internal/doctor"
)

// doctorReport is the JSON form of doctor's results.
type doctorReport struct {
	Results []doctor.Result       `json:"results"`
	Summary map[doctor.Status]int `json:"summary"`
	// Failed is true when any check FAILs (and the exit code is 1).
	Failed bool `json:"failed"`
}

// printDoctor writes the results as text (one line per finding, its fix
// indented below, then a count) or as JSON.
func printDoctor(w io.Writer, format string, results []doctor.Result) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(doctorReport{Results: results, Summary: doctor.Count(results), Failed: doctor.Failed(results)})
	}
	width := 0
	for _, r := range results {
		width = max(width, len(r.Check))
	}
	for _, r := range results {
		finding := r.Finding
		if r.Object != "" {
			finding = r.Object + ": " + finding
		}
		fmt.Fprintf(w, "%-4s  %-*s  %s\n", r.Status, width, r.Check, finding)
		if r.Fix != "" && r.Status != doctor.StatusOK {
			fmt.Fprintf(w, "%-4s  %-*s  fix: %s\n", "", width, "", r.Fix)
		}
	}
	n := doctor.Count(results)
	var parts []string
	for _, s := range []doctor.Status{doctor.StatusFail, doctor.StatusWarn, doctor.StatusOK, doctor.StatusSkip} {
		parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
	}
	_, err := fmt.Fprintf(w, "\n%s\n", strings.Join(parts, ", "))
	return err
}
