package gpuloan

import (
	"context"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/tide"
)

// What the CLI (`backfill doctor`, `describe node`) reads of GPU loans:
// the manager's own readings of workloads, ScaledObjects, histories and
// loans, so that the CLI judges as the manager decides.

// Where a workload's forecast comes from, as ForecastSourceOf says.
const (
	SourceAnnotation = sourceAnnotation
	SourceKEDA       = sourceKEDA
	SourceHistory    = sourceHistory
	// SourceNone: no schedule and no history; the manager takes the
	// workload's current replicas for its forecast, which foretells no
	// morning.
	SourceNone = sourceNone
)

// GPUWorkload is an online Deployment or StatefulSet whose pods request
// GPUs, as the manager forecasts it.
type GPUWorkload struct{ w workload }

// Kind is Deployment or StatefulSet.
func (g GPUWorkload) Kind() string { return g.w.kind }

// Namespace is the workload's namespace.
func (g GPUWorkload) Namespace() string { return g.w.namespace }

// Name is the workload's name.
func (g GPUWorkload) Name() string { return g.w.name }

// GPUsPerPod is what one of its pods requests of nvidia.com/gpu.
func (g GPUWorkload) GPUsPerPod() int { return g.w.gpusPerPod }

// Replicas is what its spec asks for now.
func (g GPUWorkload) Replicas() int32 { return g.w.replicas }

// Key is kind/namespace/name, the key of ScaledObjectsOf and Histories.
func (g GPUWorkload) Key() string { return g.w.key() }

// Annotated reports whether it states its schedule in tide.ScheduleAnnotation.
func (g GPUWorkload) Annotated() bool {
	_, ok := g.w.annotations[tide.ScheduleAnnotation]
	return ok
}

// Fits reports whether its pods may run in the pool.
func (g GPUWorkload) Fits(pool string) bool { return g.w.placement.fits(pool) }

// OnlineGPUWorkloads are the online GPU workloads among deployments and
// sets: their pods request GPUs and are not of offlineClass or the
// offline tier (colocation.PodTier).
func OnlineGPUWorkloads(deployments []appsv1.Deployment, sets []appsv1.StatefulSet, offlineClass string) []GPUWorkload {
	ws := workloadsOf(deployments, sets, offlineClass)
	out := make([]GPUWorkload, len(ws))
	for i, w := range ws {
		out[i] = GPUWorkload{w: w}
	}
	return out
}

// ScaledObject is a KEDA ScaledObject as the manager reads it.
type ScaledObject struct{ so scaledObject }

// Name is its namespace/name.
func (s ScaledObject) Name() string { return s.so.name }

// Target is the workload it scales, as GPUWorkload.Key spells it.
func (s ScaledObject) Target() string { return s.so.target }

// HasCrons reports whether it has cron triggers, readable or not.
func (s ScaledObject) HasCrons() bool { return s.so.hasCrons() }

// Problem says why its cron triggers cannot be read as a schedule, as the
// manager reads them; nil when they can or when it has none.
func (s ScaledObject) Problem() error {
	if !s.so.hasCrons() {
		return nil
	}
	_, err := s.so.schedule(max(s.so.minReplicas, 0))
	return err
}

// ScaledObjectsOf reads listed ScaledObjects (keda.sh/v1alpha1), by
// target.
func ScaledObjectsOf(items []unstructured.Unstructured) map[string]ScaledObject {
	out := map[string]ScaledObject{}
	for target, so := range scaledObjectsOf(items) {
		out[target] = ScaledObject{so: so}
	}
	return out
}

// Histories are online workloads' replicas histories, by
// GPUWorkload.Key: those with enough history for a forecast.
type Histories map[string]*tide.History

// ReadHistories reads the histories from the Prometheus at url as the
// manager does with its default settings (DefaultSettings: a week of
// kube-state-metrics' replicas).
func ReadHistories(ctx context.Context, url string, now time.Time) (Histories, error) {
	source, err := newPromSamples(url)
	if err != nil {
		return nil, err
	}
	h := &histories{source: source, s: DefaultSettings()}
	return h.of(ctx, now)
}

// ForecastSourceOf says where the manager takes w's forecast from
// (Source…), given its ScaledObject (nil: none) and the histories read
// (nil: none). problem says why a source w states was not taken: an
// annotation or cron trigger that does not parse.
func ForecastSourceOf(w GPUWorkload, so *ScaledObject, h Histories) (source string, problem error) {
	var s *scaledObject
	if so != nil {
		s = &so.so
	}
	f := forecastOf(w.w, s, h[w.Key()], 0)
	return f.source, f.problem
}

// PoolOfNode is the pool of a GPU node with these labels: its GPUs'
// model (colocation.GPUModelLabel), else PoolUnlabelled.
func PoolOfNode(labels map[string]string) string {
	return poolName(labels[colocation.GPUModelLabel])
}

// GPUsOf is what a pod requests of nvidia.com/gpu, as the scheduler
// counts.
func GPUsOf(pod *corev1.Pod) int { return gpusOf(pod) }

// Lends reports whether the manager counts the GPUs of job's pods as a
// loan: unless Kueue manages the job, whose GPUs count as taken.
func Lends(job *kubeflowv1.TFJob) bool { return !leftToKueue(job) }

// NodeLoan is one TFJob's loan on one node: the GPUs its pods there hold.
type NodeLoan struct {
	// Job is namespace/name.
	Job  string
	GPUs int
	// State is the job's LoanState; Phase is empty while the manager has
	// asked nothing of the loan. StateErr says why it is unreadable.
	State    LoanState
	StateErr error
}

// LoansOnNode are the loans on a node: the GPUs its running offline pods
// of TFJobs hold, by job, sorted, as the manager counts them. jobs are
// the TFJobs by namespace/name; a pod's job missing from it counts as
// lent. Pods must be the node's.
func LoansOnNode(pods []corev1.Pod, jobs map[string]*kubeflowv1.TFJob, offlineClass string) []NodeLoan {
	byJob := map[string]*NodeLoan{}
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		name, ok := colocation.ControllingTFJob(p)
		gpus := gpusOf(p)
		if !ok || gpus <= 0 || colocation.PodTier(p, offlineClass) == colocation.TierOnline {
			continue
		}
		key := p.Namespace + "/" + name
		job := jobs[key]
		if job != nil && leftToKueue(job) {
			continue
		}
		l := byJob[key]
		if l == nil {
			l = &NodeLoan{Job: key}
			if job != nil {
				l.State, _, l.StateErr = ReadLoanState(job.Annotations)
			}
			byJob[key] = l
		}
		l.GPUs += gpus
	}
	out := make([]NodeLoan, 0, len(byJob))
	for _, l := range byJob {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Job < out[j].Job })
	return out
}
