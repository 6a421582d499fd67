// Package docs_test checks that the documentation names only alerts,
// metrics and command-line flags that exist.
package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/backfill-dev/backfill/internal/alertrelay"
	"github.com/backfill-dev/backfill/internal/cli"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/nodeagent"
	"github.com/backfill-dev/backfill/internal/observability/rules"
)

// TestDocsNameWhatExists reads docs/*.md and README.md and checks every
// name of ours they mention against the code:
//
//   - alerts: every CamelCase word starting with Backfill (and every link
//     anchor #backfill…, a runbook section) must be an alert of
//     rules.Groups();
//   - metrics: every backfill_… and training_operator_… word must be a
//     metric of internal/metrics or of the node agent
//     (nodeagent.MetricNames), or one with _bucket, _count or _sum added
//     (a histogram's series); backfill_node_* (or backfill_node_) stands
//     for any metric with that prefix;
//   - flags, where the docs attribute them to backfill:
//     1. in a command line that starts with backfill, kubectl backfill,
//     kubectl-backfill, bin/backfill or go run ./cmd/backfill (a code
//     span, or a line of a code block, a pipeline's stage included), the
//     subcommand words must exist and every --flag and one-letter -f must
//     be a flag of that subcommand;
//     2. in a code span of prose that holds only flags (`--reclaim-window`,
//     `-A/--all-namespaces`, `--kube-api-qps=50 --kube-api-burst=100`),
//     every --flag must be a flag of some backfill command, unless
//     otherTools lists it; --reclaim-* stands for any flag with that
//     prefix.
//
// Command lines of other tools (kubectl, helm, go test, curl) are not ours
// and not read.
func TestDocsNameWhatExists(t *testing.T) {
	known := knownNames()
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for i := range pages {
		pages[i] = "docs/" + pages[i]
	}
	// Paths from the repository's root, which is where the messages point.
	for _, page := range append(pages, "README.md") {
		text, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range known.check(string(text)) {
			t.Errorf("%s:%d: %s", page, p.line, p.msg)
		}
	}
}

// TestCheck shows, on a made-up page, what the check finds and what it
// leaves alone.
func TestCheck(t *testing.T) {
	page := strings.Join([]string{
		"`BackfillTFJobFailed` and `BackfillTFJobFaild`; see [it](observability.md#backfilltfjobfaild).",              // 1
		"`backfill_tfjob_info`, `backfill_tfjob_duration_seconds_bucket`, `backfill_node_*`, `backfill_tfjob_infoo`.", // 2
		"Python's `backfill_report.report()` is no metric; `training_operator_jobs_createdd_total` is none either.",   // 3
		"",
		"```sh",                // 5
		"backfill dev --kueue", // 6
		"kubectl apply --server-side -k config/default  # kubectl's flags are not ours",
		"for i in 1 2; do backfill submit -f - --queue q --wiat; done",        // 8
		"go run ./cmd/backfill get [JOB…] [-A] [-o wide|yaml|json|name] [-x]", // 9
		"backfill dev up \\", // 10
		"  --kueue --gpu-nods 2",
		"backfill submt -f x.yaml", // 12
		"```",
		"",
		"The manager's `--reclaim-windw`, `--reclaim-*`, `--reclaim=false`, `--feature-gates=A=true`,",  // 15
		"and `kubectl backfill logs --replica worker-1 -p -f -x`, `-o wide`, `helm install --set a=b`.", // 16
	}, "\n")
	want := []string{
		"1: alert BackfillTFJobFaild does not exist: rules.Groups() (internal/observability/rules) has no such alert",
		"1: link #backfilltfjobfaild names no alert's runbook: rules.Groups() has no alert of that name",
		"2: metric backfill_tfjob_infoo does not exist: internal/metrics registers no such metric, nor does the node agent",
		"3: metric training_operator_jobs_createdd_total does not exist: internal/metrics registers no such metric, nor does the node agent",
		`6: backfill dev has no flag --kueue (in "backfill dev --kueue")`,
		`8: backfill submit has no flag --wiat (in "do backfill submit -f - --queue q --wiat")`,
		`9: backfill get has no flag -x (in "go run ./cmd/backfill get [JOB…] [-A] [-o wide|yaml|json|name] [-x]")`,
		`10: backfill dev up has no flag --gpu-nods (in "backfill dev up --kueue --gpu-nods 2")`,
		`12: backfill has no command submt (in "backfill submt -f x.yaml")`,
		"15: flag --reclaim-windw is no flag of any backfill command (if it is another program's, add it to otherTools)",
		`16: backfill logs has no flag -x (in "kubectl backfill logs --replica worker-1 -p -f -x")`,
	}
	var got []string
	for _, p := range knownNames().check(page) {
		got = append(got, fmt.Sprintf("%d: %s", p.line, p.msg))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Problems found (-want +got):\n%s", diff)
	}
}

// otherTools are flags of other programs that the docs write in a code
// span of their own, with the program they belong to. Add one here when
// the test takes another tool's flag for backfill's.
var otherTools = map[string]string{
	"create-namespace":               "helm",
	"enable-scheme":                  "Kubeflow's training-operator",
	"feature-gates":                  "the Kubernetes components",
	"runtime-config":                 "kube-apiserver",
	"max-requests-inflight":          "kube-apiserver",
	"max-mutating-requests-inflight": "kube-apiserver",
	"set":                            "helm",
}

// notMetrics are backfill_ words that are not metrics.
var notMetrics = map[string]string{
	"backfill_report": "the Python report helper, python/backfill_report.py",
}

// names are what the code defines.
type names struct {
	alerts  map[string]bool
	metrics map[string]bool
	root    *cobra.Command
	// flags are the long flags of every command.
	flags map[string]bool
}

func knownNames() names {
	n := names{alerts: map[string]bool{}, metrics: map[string]bool{}, flags: map[string]bool{}, root: cli.NewRootCommand()}
	for _, g := range rules.Groups() {
		for _, a := range g.Alerts {
			n.alerts[a.Name] = true
		}
	}
	// The manager's metrics, and the node agent's and the alert relay's,
	// each on its own registry.
	for _, m := range slices.Concat(metrics.Names(), nodeagent.MetricNames(), alertrelay.MetricNames()) {
		n.metrics[m] = true
	}
	walk(n.root, func(c *cobra.Command) {
		// cobra adds --help when a command runs; add it now.
		c.InitDefaultHelpFlag()
		c.Flags().VisitAll(func(f *pflag.Flag) { n.flags[f.Name] = true })
	})
	return n
}

func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}

// problem is a name on a line that the code does not have.
type problem struct {
	line int
	msg  string
}

var (
	alertWord  = regexp.MustCompile(`\bBackfill[A-Z][A-Za-z0-9]*\b`)
	alertLink  = regexp.MustCompile(`\]\([^)#]*#(backfill[a-z0-9]+)\)`)
	metricWord = regexp.MustCompile(`\b(?:backfill|training_operator)_[a-z0-9_]*(?:\*)?`)
	histogram  = regexp.MustCompile(`_(?:bucket|count|sum)$`)
)

func (n names) check(text string) []problem {
	var out []problem
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		out = append(out, n.checkAlerts(i+1, line)...)
		out = append(out, n.checkMetrics(i+1, line)...)
	}
	for _, s := range codeOf(lines) {
		out = append(out, n.checkFlags(s)...)
	}
	return out
}

func (n names) checkAlerts(line int, text string) []problem {
	var out []problem
	for _, a := range alertWord.FindAllString(text, -1) {
		if !n.alerts[a] {
			out = append(out, problem{line, fmt.Sprintf("alert %s does not exist: rules.Groups() (internal/observability/rules) has no such alert", a)})
		}
	}
	for _, m := range alertLink.FindAllStringSubmatch(text, -1) {
		if !anyKey(n.alerts, func(a string) bool { return strings.ToLower(a) == m[1] }) {
			out = append(out, problem{line, fmt.Sprintf("link #%s names no alert's runbook: rules.Groups() has no alert of that name", m[1])})
		}
	}
	return out
}

func (n names) checkMetrics(line int, text string) []problem {
	var out []problem
	for _, m := range metricWord.FindAllString(text, -1) {
		if notMetrics[m] != "" {
			continue
		}
		// backfill_node_* and `backfill_` stand for every metric they start.
		if prefix := strings.TrimSuffix(m, "*"); strings.HasSuffix(prefix, "_") {
			if !anyKey(n.metrics, func(k string) bool { return strings.HasPrefix(k, prefix) }) {
				out = append(out, problem{line, fmt.Sprintf("metric %s matches no metric: internal/metrics and the node agent register none starting %s", m, prefix)})
			}
			continue
		}
		if !n.metrics[m] && !n.metrics[histogram.ReplaceAllString(m, "")] {
			out = append(out, problem{line, fmt.Sprintf("metric %s does not exist: internal/metrics registers no such metric, nor does the node agent", m)})
		}
	}
	return out
}

func anyKey(m map[string]bool, f func(string) bool) bool {
	for k := range m {
		if f(k) {
			return true
		}
	}
	return false
}
