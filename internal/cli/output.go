package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// Output formats of -o, as kubectl names them.
const (
	outputTable = ""
	outputWide  = "wide"
	outputYAML  = "yaml"
	outputJSON  = "json"
	outputName  = "name"
)

// checkOutput refuses an -o value the command does not know.
func checkOutput(value string, allowed ...string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	var names []string
	for _, a := range allowed {
		if a != outputTable {
			names = append(names, a)
		}
	}
	return usageError{fmt.Errorf("unknown output format %q: use -o %s", value, strings.Join(names, "|"))}
}

// printJobs writes jobs as YAML, JSON or names, as kubectl does: one job
// as itself, several (or a listing) as a List.
func printJobs(out io.Writer, format string, jobs []kubeflowv1.TFJob, single bool) error {
	if format == outputName {
		for _, job := range jobs {
			fmt.Fprintf(out, "tfjob.kubeflow.org/%s\n", job.Name)
		}
		return nil
	}
	items := make([]any, 0, len(jobs))
	for i := range jobs {
		items = append(items, printable(&jobs[i]))
	}
	var doc any = map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]any{"resourceVersion": ""}}
	if single && len(items) == 1 {
		doc = items[0]
	}
	data, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		return fmt.Errorf("encoding the TFJobs: %w", err)
	}
	if format == outputYAML {
		if data, err = yaml.JSONToYAML(data); err != nil {
			return fmt.Errorf("encoding the TFJobs: %w", err)
		}
	}
	_, err = out.Write(data)
	if format == outputJSON {
		fmt.Fprintln(out)
	}
	return err
}

// printable is a job as `kubectl get -o yaml` shows it: with its kind and
// without managedFields.
func printable(job *kubeflowv1.TFJob) *kubeflowv1.TFJob {
	job = job.DeepCopy()
	job.APIVersion, job.Kind = kubeflowv1.GroupVersion.String(), "TFJob"
	job.ManagedFields = nil
	return job
}

// newTable is a tab writer laid out as kubectl's tables.
func newTable(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
}

// age is kubectl's AGE of t at now: "45s", "5m10s", "3h", "2d4h"; "<unknown>"
// when unset.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// orNone is s, or "<none>" as kubectl prints an empty value.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
