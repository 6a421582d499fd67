package doctor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/gpuloan"
	"github.com/backfill-dev/backfill/internal/tide"
)

// readScaledObjects names the read of KEDA's ScaledObjects in findings.
const readScaledObjects = "scaledobjects.keda.sh in every namespace"

// KEDAView is what doctor read of KEDA's ScaledObjects.
type KEDAView struct {
	// Served: the apiserver serves keda.sh/v1alpha1 ScaledObjects.
	Served bool
	// ScaledObjects are every ScaledObject of the cluster.
	ScaledObjects []unstructured.Unstructured
	// Forbidden: the user may not list them; Err: listing them failed
	// otherwise.
	Forbidden bool
	Err       error
}

// readKEDA lists every ScaledObject, as GPU loans read them: served or
// not, refused, or failed, it says so rather than stopping doctor.
func readKEDA(ctx context.Context, c client.Reader) KEDAView {
	list := &unstructured.UnstructuredList{}
	gv := gpuloan.ScaledObjects.GroupVersion()
	list.SetGroupVersionKind(gv.WithKind("ScaledObjectList"))
	err := c.List(ctx, list)
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return KEDAView{}
	case apierrors.IsForbidden(err):
		return KEDAView{Served: true, Forbidden: true}
	case err != nil:
		return KEDAView{Served: true, Err: err}
	}
	return KEDAView{Served: true, ScaledObjects: list.Items}
}

// gpuPools are the pools of the nodes with GPUs, sorted.
func gpuPools(s *Snapshot) []string {
	pools := map[string]bool{}
	for i := range s.Nodes {
		if q := s.Nodes[i].Status.Allocatable[GPUResource]; !q.IsZero() {
			pools[gpuloan.PoolOfNode(s.Nodes[i].Labels)] = true
		}
	}
	return slices.Sorted(maps.Keys(pools))
}

// loanWorkload is an online GPU workload of a GPU pool, with the pools it
// may run in.
type loanWorkload struct {
	w     gpuloan.GPUWorkload
	pools []string
}

// ref is how findings name it: "deployment namespace/name".
func (l loanWorkload) ref() string {
	return strings.ToLower(l.w.Kind()) + " " + l.w.Namespace() + "/" + l.w.Name()
}

// loanWorkloads are the online GPU workloads (as GPU loans count them)
// that may run in one of pools.
func loanWorkloads(s *Snapshot, pools []string) []loanWorkload {
	var out []loanWorkload
	for _, w := range gpuloan.OnlineGPUWorkloads(s.Deployments, s.StatefulSets, s.OfflinePriorityClass) {
		var in []string
		for _, p := range pools {
			if w.Fits(p) {
				in = append(in, p)
			}
		}
		if len(in) > 0 {
			out = append(out, loanWorkload{w: w, pools: in})
		}
	}
	slices.SortFunc(out, func(a, b loanWorkload) int { return strings.Compare(a.w.Key(), b.w.Key()) })
	return out
}

// checkGPULoanForecast names the online GPU workloads GPU loans have no
// forecast for: no backfill.dev/gpu-schedule annotation, no KEDA
// ScaledObject with cron triggers, no replicas history in Prometheus. The
// manager then takes their current replicas for the whole forecast: it
// cannot return the GPUs training borrowed ahead of their morning, and a
// pool where no workload has a forecast lends nothing under its care. A
// WARN for each, with how to state one; a WARN too for a schedule
// annotation that does not parse, which the manager passes over.
func checkGPULoanForecast(s *Snapshot, prom *PrometheusView) []Result {
	pools := gpuPools(s)
	if len(pools) == 0 {
		return []Result{ok(CheckGPULoanForecast, "no node has GPUs: there are no GPU pools, and nothing for GPU loans to forecast")}
	}
	workloads := loanWorkloads(s, pools)
	if len(workloads) == 0 {
		return []Result{ok(CheckGPULoanForecast, fmt.Sprintf("no online Deployment or StatefulSet requests GPUs in pool(s) %s: no online GPU workload to forecast, "+
			"and none to return lent GPUs to", strings.Join(pools, ", ")))}
	}
	scaled := gpuloan.ScaledObjectsOf(s.KEDA.ScaledObjects)
	var histories gpuloan.Histories
	if prom != nil && prom.Err == nil && prom.LoanHistoriesErr == nil {
		histories = prom.LoanHistories
	}
	var out []Result
	bySource := map[string]int{}
	for _, l := range workloads {
		var so *gpuloan.ScaledObject
		if found, exists := scaled[l.w.Key()]; exists {
			so = &found
		}
		source, problem := gpuloan.ForecastSourceOf(l.w, so, histories)
		switch {
		case source == gpuloan.SourceNone:
			out = append(out, Result{Check: CheckGPULoanForecast, Status: StatusWarn, Object: l.ref(),
				Finding: noForecastFinding(s, prom, l, so, problem), Fix: forecastFix(l)})
		case l.w.Annotated() && source != gpuloan.SourceAnnotation:
			out = append(out, Result{Check: CheckGPULoanForecast, Status: StatusWarn, Object: l.ref(),
				Finding: fmt.Sprintf("the %s annotation of online GPU workload %s cannot be read, so GPU loans forecast it from its %s instead: %v",
					tide.ScheduleAnnotation, l.ref(), sourceInWords(source), problem),
				Fix: forecastFix(l)})
		default:
			bySource[source]++
		}
	}
	if len(out) > 0 {
		return out
	}
	var by []string
	for _, source := range []string{gpuloan.SourceAnnotation, gpuloan.SourceKEDA, gpuloan.SourceHistory} {
		if n := bySource[source]; n > 0 {
			by = append(by, fmt.Sprintf("%d from %s", n, sourceInWords(source)))
		}
	}
	return []Result{ok(CheckGPULoanForecast, fmt.Sprintf("every online GPU workload of pool(s) %s has a forecast: %s",
		strings.Join(pools, ", "), strings.Join(by, ", ")))}
}

// sourceInWords says a forecast's source in words.
func sourceInWords(source string) string {
	switch source {
	case gpuloan.SourceAnnotation:
		return "the " + tide.ScheduleAnnotation + " annotation"
	case gpuloan.SourceKEDA:
		return "KEDA cron triggers"
	case gpuloan.SourceHistory:
		return "replicas history"
	}
	return "current replicas"
}

// noForecastFinding says which sources a workload lacks, and what that
// means for the GPUs training borrows in its pools.
func noForecastFinding(s *Snapshot, prom *PrometheusView, l loanWorkload, so *gpuloan.ScaledObject, problem error) string {
	var history string
	switch {
	case prom == nil:
		history = "no replicas history read (no --prometheus-url given)"
	case prom.Err != nil:
		history = "no replicas history read (Prometheus could not be read, see prometheus-targets)"
	case prom.LoanHistoriesErr != nil:
		history = fmt.Sprintf("no replicas history read (%v)", prom.LoanHistoriesErr)
	default:
		history = "no replicas history in Prometheus (kube-state-metrics' replicas over at least the last 3 days)"
	}
	keda := "no KEDA ScaledObject with cron triggers"
	switch {
	case s.KEDA.Forbidden || s.KEDA.Err != nil:
		keda = "KEDA's ScaledObjects could not be read (see gpu-loan-keda)"
	case so != nil && so.Problem() != nil:
		keda = "ScaledObject " + so.Name() + " whose cron triggers cannot be read (see gpu-loan-keda)"
	}
	annotation := "no " + tide.ScheduleAnnotation + " annotation"
	if l.w.Annotated() {
		annotation = fmt.Sprintf("a %s annotation that cannot be read (%v)", tide.ScheduleAnnotation, problem)
	}
	return fmt.Sprintf("online GPU workload %s (%d GPU(s) per pod, %d replica(s), pool(s) %s) has no forecast: %s, %s, %s; "+
		"GPU loans take its %d current replica(s) for the next %v, so they cannot return borrowed GPUs ahead of its next scale-up",
		l.ref(), l.w.GPUsPerPod(), l.w.Replicas(), strings.Join(l.pools, ", "), annotation, keda, history, l.w.Replicas(), gpuloan.DefaultSettings().Horizon)
}

// forecastFix says how to give a workload a forecast, with an example
// annotation of its own replicas.
func forecastFix(l loanWorkload) string {
	peak := max(l.w.Replicas(), 1)
	return fmt.Sprintf("state when it needs its GPUs: kubectl annotate %s -n %s %s %s='Europe/Berlin 0 7 * * 1-5 - 0 22 * * 1-5 = %d' --overwrite "+
		"(windows of time zone, start and end as 5 cron fields, and replicas, separated by ';'); or scale it with a KEDA ScaledObject with cron triggers; "+
		"or keep a week of kube-state-metrics' %s in Prometheus and run the manager with --prometheus-url",
		strings.ToLower(l.w.Kind()), l.w.Namespace(), l.w.Name(), tide.ScheduleAnnotation, peak, replicasMetric(l.w.Kind()))
}

// replicasMetric is kube-state-metrics' series of a kind's replicas.
func replicasMetric(kind string) string {
	if kind == "StatefulSet" {
		return "kube_statefulset_replicas"
	}
	return "kube_deployment_spec_replicas"
}

// checkGPULoanKEDA says whether KEDA's ScaledObjects can be read, as GPU
// loans read them, and names each that scales an online GPU workload yet
// whose cron triggers do not parse: the manager passes over it, and
// forecasts the workload from its annotation, its history or its current
// replicas. Not served (no KEDA): OK. Refused: WARN with the role to
// bind. Listing failed: FAIL, as the manager's own listing fails alike.
func checkGPULoanKEDA(s *Snapshot) []Result {
	k := s.KEDA
	switch {
	case !k.Served:
		return []Result{ok(CheckGPULoanKEDA, "KEDA is not installed (no keda.sh/v1alpha1 ScaledObjects served): GPU loans forecast online GPU workloads from their "+
			tide.ScheduleAnnotation+" annotation or their replicas history")}
	case k.Forbidden:
		return []Result{{Check: CheckGPULoanKEDA, Status: StatusWarn,
			Finding: "KEDA's ScaledObjects are served but you may not list " + readScaledObjects + ": the cron triggers that forecast online GPU workloads are not checked",
			Fix:     clusterViewFix(readScaledObjects)}}
	case k.Err != nil:
		return []Result{{Check: CheckGPULoanKEDA, Status: StatusFail,
			Finding: fmt.Sprintf("listing KEDA's ScaledObjects (%s) failed: %v; the manager's listing fails alike, and it forecasts the workloads they scale from their annotation, history or current replicas",
				gpuloan.ScaledObjects.GroupResource(), k.Err),
			Fix: "check that KEDA's CRD serves keda.sh/v1alpha1 (kubectl get crd scaledobjects.keda.sh -o yaml) and the apiserver's log for the failing list"}}
	}
	scaled := gpuloan.ScaledObjectsOf(k.ScaledObjects)
	var gpu []gpuloan.ScaledObject
	if s.Forbidden[readDeployments] || s.Forbidden[readStatefulSets] {
		// Which workloads use GPUs is unknown: judge every ScaledObject.
		gpu = slices.Collect(maps.Values(scaled))
	} else {
		for _, w := range gpuloan.OnlineGPUWorkloads(s.Deployments, s.StatefulSets, s.OfflinePriorityClass) {
			if so, found := scaled[w.Key()]; found {
				gpu = append(gpu, so)
			}
		}
	}
	slices.SortFunc(gpu, func(a, b gpuloan.ScaledObject) int { return strings.Compare(a.Name(), b.Name()) })
	var out []Result
	crons := 0
	for _, so := range gpu {
		if so.HasCrons() {
			crons++
		}
		err := so.Problem()
		if err == nil {
			continue
		}
		out = append(out, Result{Check: CheckGPULoanKEDA, Status: StatusWarn, Object: "scaledobject " + so.Name(),
			Finding: fmt.Sprintf("the cron triggers of ScaledObject %s, which scales online GPU workload %s, cannot be read as a schedule: %v; "+
				"GPU loans forecast the workload from its annotation, history or current replicas instead", so.Name(), targetName(so.Target()), unwrapName(err)),
			Fix: "fix the trigger's metadata as KEDA's cron scaler reads it: timezone an IANA name (Europe/Berlin), start and end 5 cron fields (0 7 * * 1-5), " +
				"desiredReplicas a whole number in quotes (\"8\"); or state the schedule in the workload's " + tide.ScheduleAnnotation + " annotation, which overrides it"})
	}
	if len(out) > 0 {
		return out
	}
	if len(gpu) == 0 {
		return []Result{ok(CheckGPULoanKEDA, fmt.Sprintf("KEDA's ScaledObjects are readable (%d in all); none scales an online GPU workload", len(k.ScaledObjects)))}
	}
	return []Result{ok(CheckGPULoanKEDA, fmt.Sprintf("%d ScaledObject(s) scale online GPU workloads, %d with cron triggers that read as schedules", len(gpu), crons))}
}

// targetName is a ScaledObject's target as findings name workloads:
// "deployment namespace/name".
func targetName(target string) string {
	kind, rest, _ := strings.Cut(target, "/")
	return strings.ToLower(kind) + " " + rest
}

// unwrapName drops the "KEDA ScaledObject NAME: " the manager's error
// starts with, which the finding says already.
func unwrapName(err error) error {
	if inner := errors.Unwrap(err); inner != nil {
		return inner
	}
	return err
}
