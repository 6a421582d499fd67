package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/devcluster"
	"github.com/backfill-dev/backfill/internal/doctor"
)

// doctorOptions are the flags of `backfill doctor`.
type doctorOptions struct {
	kube                 *kubeFlags
	allNamespaces        bool
	output               string
	prometheusURL        string
	offlinePriorityClass string
	logTail              int64
	devStateDir          string
}

func newDoctorCommand() *cobra.Command {
	o := &doctorOptions{devStateDir: devcluster.DefaultOptions().StateDir}
	cmd := &cobra.Command{
		Use:   "doctor [JOB]",
		Short: "Check the cluster, or one TFJob, for what keeps training from running",
		Long: `Walk the troubleshooting checklist of a co-located training cluster and
print each check as OK, WARN or FAIL with what was found and the fix: the
TFJob CRD (and whether it is backfill's) and the operator; another TFJob
controller (Kubeflow's training-operator or tf-operator) beside it; TFJobs
that ask for a Kueue queue Kueue does not manage, or that Kueue keeps
waiting, and why; pods pending for lack of GPU, CPU or memory,
or of reclaimed capacity (backfill.dev/batch-cpu, batch-memory) and why
the nodes publish so little, or on a missing PriorityClass; pods the
apiserver refuses to create, naming the ResourceQuota or LimitRange and
its rule (reckoned with what the pods really request: on reclaimed
capacity cpu and memory requests of 0, the templates' limits and the
batch resources), or quoting any other refusal; an offline priority that
is not below online pods; nodes
without nvidia.com/gpu; nodes whose reclaimed capacity is frozen on stale
usage; crash-looping containers and the known errors in their logs;
PrometheusRules and Grafana dashboards that query GPU metric names no
exporter emits; and, with --prometheus-url, scrape targets down and
dashboards without data.

With JOB, the job checks look at that TFJob only. Exit code 0 when no
check FAILs, 1 when one does, 2 when called wrongly. See
docs/troubleshooting.md for every check.`,
		Example: `  kubectl backfill doctor
  kubectl backfill doctor mnist -n team-a
  kubectl backfill doctor -A --prometheus-url http://localhost:9090 -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			job := ""
			if len(args) == 1 {
				job = args[0]
			}
			if err := o.validate(job); err != nil {
				return usageError{err}
			}
			return o.run(cmd, job)
		},
	}
	o.kube = addKubeFlags(cmd)
	f := cmd.Flags()
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Check the TFJobs of every namespace.")
	f.StringVarP(&o.output, "output", "o", "", "Output format: text (default) or json.")
	f.StringVar(&o.prometheusURL, "prometheus-url", "", "Base URL of the Prometheus that scrapes the cluster, e.g. http://localhost:9090; enables the scrape-target and dashboard-data checks. Defaults to the local backfill dev cluster's when doctor talks to it.")
	f.StringVar(&o.offlinePriorityClass, "offline-priority-class", colocation.DefaultOfflinePriorityClass, "PriorityClass of training pods that name none: the manager's --offline-priority-class.")
	f.Int64Var(&o.logTail, "log-tail", 200, "Lines of a crash-looping container's log to search for known errors.")
	f.StringVar(&o.devStateDir, "dev-state-dir", o.devStateDir, "State directory of a local backfill dev cluster, whose Prometheus is the default --prometheus-url.")
	return cmd
}

// validate checks the flags before anything talks to a cluster.
func (o *doctorOptions) validate(job string) error {
	switch o.output {
	case "", "text", "json":
	default:
		return fmt.Errorf("--output=%q: must be text or json", o.output)
	}
	if o.prometheusURL != "" {
		u, err := url.Parse(o.prometheusURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--prometheus-url=%q: must be an http:// or https:// URL with a host, e.g. http://localhost:9090", o.prometheusURL)
		}
	}
	if o.logTail < 1 || o.logTail > 10000 {
		return fmt.Errorf("--log-tail=%d: must be 1 to 10000", o.logTail)
	}
	if o.offlinePriorityClass == "" {
		return fmt.Errorf("--offline-priority-class is empty: give the manager's --offline-priority-class, e.g. %s", colocation.DefaultOfflinePriorityClass)
	}
	if job != "" && o.allNamespaces {
		return fmt.Errorf("a TFJob is in one namespace: give JOB with -n NAMESPACE, not with -A")
	}
	return nil
}

func (o *doctorOptions) run(cmd *cobra.Command, job string) error {
	k, err := o.kube.connect()
	if err != nil {
		return err
	}
	scope := doctor.Scope{Namespace: k.namespace, Job: job, OfflinePriorityClass: o.offlinePriorityClass, LogTail: o.logTail, MaxLogs: 20}
	if o.allNamespaces {
		scope.Namespace = ""
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
	defer cancel()
	snap, err := doctor.Collect(ctx, k.client, k.clientset, scope)
	if errors.Is(err, doctor.ErrJobNotFound) {
		return fmt.Errorf("TFJob %q not found in namespace %q: list them with `kubectl get tfjobs -n %s`", job, scope.Namespace, scope.Namespace)
	}
	if err != nil {
		return fmt.Errorf("reading the cluster at %s: %w", k.config.Host, err)
	}
	var prom *doctor.PrometheusView
	if promURL := o.prometheusFor(k.config.Host); promURL != "" {
		prom = doctor.ReadPrometheus(ctx, &http.Client{Timeout: 15 * time.Second}, promURL)
	}
	results := doctor.Run(snap, prom)
	if err := printDoctor(cmd.OutOrStdout(), o.output, results); err != nil {
		return err
	}
	if doctor.Failed(results) {
		return fmt.Errorf("%d check(s) FAIL", doctor.Count(results)[doctor.StatusFail])
	}
	return nil
}

// prometheusFor is --prometheus-url, else the Prometheus of the running
// local cluster whose apiserver is host, else "".
func (o *doctorOptions) prometheusFor(host string) string {
	if o.prometheusURL != "" {
		return o.prometheusURL
	}
	s, err := devcluster.ReadState(o.devStateDir)
	if err != nil || !s.Running() || s.Prometheus == "" {
		return ""
	}
	if strings.TrimSuffix(s.Server, "/") != strings.TrimSuffix(host, "/") {
		return ""
	}
	return s.Prometheus
}
