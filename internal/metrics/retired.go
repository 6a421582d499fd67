package metrics

import (
	"context"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	toolscache "k8s.io/client-go/tools/cache"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// retiredJobs counts the retired TFJobs, which the manager's cache leaves
// out, by namespace and final state (the retired label's value), so that
// backfill_tfjobs still counts every job. It watches the jobs' metadata
// alone and keeps one byte per job besides its UID: a long history costs
// the manager next to nothing.
type retiredJobs struct {
	label string

	mu     sync.Mutex
	byNS   map[string]map[types.UID]uint8 // namespace, UID: index in Phases
	synced bool
	// deleted is told of a retired job that was deleted.
	deleted func(namespace string)
	// present reports whether a job the watch no longer shows still exists:
	// a job whose label is removed leaves the selection the same way a
	// deleted one does, by a deletion of its last version.
	present func(metav1.Object) bool
}

func newRetiredJobs(label string, deleted func(namespace string)) *retiredJobs {
	return &retiredJobs{label: label, byNS: map[string]map[types.UID]uint8{}, deleted: deleted}
}

// run watches the retired TFJobs' metadata until ctx ends.
func (r *retiredJobs) run(ctx context.Context, client metadata.Interface) {
	jobs := client.Resource(kubeflowv1.GroupVersion.WithResource("tfjobs"))
	selected := func(o metav1.ListOptions) metav1.ListOptions {
		o.LabelSelector = r.label
		return o
	}
	r.present = func(m metav1.Object) bool {
		got, err := jobs.Namespace(m.GetNamespace()).Get(ctx, m.GetName(), metav1.GetOptions{})
		return err == nil && got.UID == m.GetUID()
	}
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return jobs.List(ctx, selected(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (apiwatch.Interface, error) {
			return jobs.Watch(ctx, selected(o))
		},
	}
	toolscache.NewReflector(lw, &metav1.PartialObjectMetadata{}, r, 0).RunWithContext(ctx)
}

// counts returns the retired jobs by namespace and phase, and whether the
// first list has completed.
func (r *retiredJobs) counts() (map[string]map[string]int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]map[string]int, len(r.byNS))
	for ns, jobs := range r.byNS {
		byPhase := map[string]int{}
		for _, phase := range jobs {
			byPhase[phaseName(phase)]++
		}
		out[ns] = byPhase
	}
	return out, r.synced
}

// Add implements toolscache.ReflectorStore.
func (r *retiredJobs) Add(obj any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.put(obj)
	return nil
}

// Update implements toolscache.ReflectorStore.
func (r *retiredJobs) Update(obj any) error {
	return r.Add(obj)
}

// Delete implements toolscache.ReflectorStore: a job deleted, or one that
// lost its label.
func (r *retiredJobs) Delete(obj any) error {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil
	}
	r.mu.Lock()
	jobs := r.byNS[m.GetNamespace()]
	delete(jobs, m.GetUID())
	if len(jobs) == 0 {
		delete(r.byNS, m.GetNamespace())
	}
	r.mu.Unlock()
	if r.deleted != nil && (r.present == nil || !r.present(m)) {
		r.deleted(m.GetNamespace())
	}
	return nil
}

// Replace implements toolscache.ReflectorStore: a fresh list.
func (r *retiredJobs) Replace(objs []any, _ string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byNS = map[string]map[types.UID]uint8{}
	for _, obj := range objs {
		r.put(obj)
	}
	r.synced = true
	return nil
}

// Resync implements toolscache.ReflectorStore; there is nothing to resync.
func (r *retiredJobs) Resync() error { return nil }

// put records one job; r.mu is held.
func (r *retiredJobs) put(obj any) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	ns := m.GetNamespace()
	if r.byNS[ns] == nil {
		r.byNS[ns] = map[types.UID]uint8{}
	}
	r.byNS[ns][m.GetUID()] = phaseIndex(m.GetLabels()[r.label])
}

// phaseIndex is a phase's index in Phases, or len(Phases) for any other.
func phaseIndex(phase string) uint8 {
	if i := slices.Index(Phases, phase); i >= 0 {
		return uint8(i)
	}
	return uint8(len(Phases))
}

// phaseName undoes phaseIndex.
func phaseName(i uint8) string {
	if int(i) < len(Phases) {
		return Phases[i]
	}
	return PhaseUnknown
}
