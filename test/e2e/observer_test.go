//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// observer watches every TFJob and pod of a cluster from the start of a
// test and keeps what polling could miss: a job condition that lasted one
// reconcile pass, the DisruptionTarget condition of a pod deleted a moment
// later, two jobs holding nodes at the same moment.
type observer struct {
	mu   sync.Mutex
	jobs map[string]*jobHistory
	pods map[types.UID]*podHistory
	// together are the moments when more than one TFJob had pods bound to
	// nodes, each as "job=bound ..." (consecutive repeats dropped).
	together []string
}

// jobHistory is everything seen of one TFJob.
type jobHistory struct {
	// conditions are the distinct "Type=Status/Reason" seen, in order.
	conditions []string
	failed     bool
	// maxRestarts and maxDisruptions are the highest counts seen.
	maxRestarts, maxDisruptions int32
}

// podHistory is everything seen of one pod (one UID).
type podHistory struct {
	namespace, name string
	labels          map[string]string
	node            string
	phases          []corev1.PodPhase
	// disruption is the reason of a DisruptionTarget=True condition, if
	// the pod ever had one.
	disruption string
	gone       bool
	phase      corev1.PodPhase
}

func observe(ctx context.Context, c client.WithWatch) *observer {
	o := &observer{jobs: map[string]*jobHistory{}, pods: map[types.UID]*podHistory{}}
	go watchAll(ctx, c, &kubeflowv1.TFJobList{}, o.onJob, func([]client.Object) {})
	go watchAll(ctx, c, &corev1.PodList{}, o.onPod, o.resyncPods)
	return o
}

// watchAll lists, then watches from the list's resourceVersion, resuming
// where it left off when the watch ends, listing again when the
// apiserver says the version is too old.
func watchAll(ctx context.Context, c client.WithWatch, list client.ObjectList, handle func(client.Object, bool), resync func([]client.Object)) {
	for ctx.Err() == nil {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, l); err != nil {
			pause(ctx)
			continue
		}
		items, _ := meta.ExtractList(l)
		var objs []client.Object
		for _, item := range items {
			obj := item.(client.Object)
			objs = append(objs, obj)
			handle(obj, false)
		}
		resync(objs)
		rv := l.GetResourceVersion()
		for ctx.Err() == nil {
			w, err := c.Watch(ctx, list.DeepCopyObject().(client.ObjectList), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
			if err != nil {
				break
			}
			next, ok := follow(w, handle)
			w.Stop()
			if !ok {
				break
			}
			if next != "" {
				rv = next
			}
		}
		pause(ctx)
	}
}

// follow hands every event of w to handle until the watch ends. It
// returns the last resourceVersion seen, and false when the watch must be
// restarted from a new list.
func follow(w watch.Interface, handle func(client.Object, bool)) (string, bool) {
	var rv string
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Error:
			return rv, false
		case watch.Bookmark:
		default:
			obj, ok := ev.Object.(client.Object)
			if !ok {
				continue
			}
			handle(obj, ev.Type == watch.Deleted)
			rv = obj.GetResourceVersion()
		}
	}
	return rv, true
}

// pause waits a moment before a watch is tried again.
func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(500 * time.Millisecond):
	}
}

func (o *observer) onJob(obj client.Object, _ bool) {
	job, ok := obj.(*kubeflowv1.TFJob)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	key := job.Namespace + "/" + job.Name
	h := o.jobs[key]
	if h == nil {
		h = &jobHistory{}
		o.jobs[key] = h
	}
	for _, c := range job.Status.Conditions {
		s := fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason)
		if !slices.Contains(h.conditions, s) {
			h.conditions = append(h.conditions, s)
		}
	}
	h.failed = h.failed || isFailed(job)
	h.maxRestarts = max(h.maxRestarts, job.Status.Restarts)
	h.maxDisruptions = max(h.maxDisruptions, job.Status.Disruptions)
}

func (o *observer) onPod(obj client.Object, deleted bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	h := o.pods[pod.UID]
	if h == nil {
		h = &podHistory{namespace: pod.Namespace, name: pod.Name}
		o.pods[pod.UID] = h
	}
	h.labels = pod.Labels
	if pod.Spec.NodeName != "" {
		h.node = pod.Spec.NodeName
	}
	h.phase = pod.Status.Phase
	if !slices.Contains(h.phases, pod.Status.Phase) {
		h.phases = append(h.phases, pod.Status.Phase)
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			h.disruption = c.Reason
		}
	}
	h.gone = h.gone || deleted
	o.noteTogether()
}

// resyncPods marks the pods missing from a fresh list as gone.
func (o *observer) resyncPods(objs []client.Object) {
	o.mu.Lock()
	defer o.mu.Unlock()
	live := map[types.UID]bool{}
	for _, obj := range objs {
		live[obj.GetUID()] = true
	}
	for uid, h := range o.pods {
		if !live[uid] {
			h.gone = true
		}
	}
	o.noteTogether()
}

// noteTogether records the moment if more than one TFJob holds nodes.
// Called with o.mu held.
func (o *observer) noteTogether() {
	bound := map[string]int{}
	for _, h := range o.pods {
		job := h.labels[kubeflowv1.JobNameLabel]
		if job == "" || h.gone || h.node == "" || h.phase == corev1.PodSucceeded || h.phase == corev1.PodFailed {
			continue
		}
		bound[h.namespace+"/"+job]++
	}
	if len(bound) < 2 {
		return
	}
	var parts []string
	for job, n := range bound {
		parts = append(parts, fmt.Sprintf("%s=%d", job, n))
	}
	sort.Strings(parts)
	s := strings.Join(parts, " ")
	if n := len(o.together); n == 0 || o.together[n-1] != s {
		o.together = append(o.together, s)
	}
}

// jobConditions are the distinct conditions a job has shown.
func (o *observer) jobConditions(ns, name string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if h := o.jobs[ns+"/"+name]; h != nil {
		return slices.Clone(h.conditions)
	}
	return nil
}

// jobEverFailed reports whether the job was ever seen Failed.
func (o *observer) jobEverFailed(ns, name string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	h := o.jobs[ns+"/"+name]
	return h != nil && h.failed
}

// jobMaxRestarts is the highest status.restarts the job has shown.
func (o *observer) jobMaxRestarts(ns, name string) int32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if h := o.jobs[ns+"/"+name]; h != nil {
		return h.maxRestarts
	}
	return 0
}

// podsWith are copies of the histories of the pods of a namespace that
// carry a label value.
func (o *observer) podsWith(ns, label, value string) []podHistory {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []podHistory
	for _, h := range o.pods {
		if h.namespace == ns && h.labels[label] == value {
			c := *h
			c.phases = slices.Clone(h.phases)
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// podHistoryOf is a copy of the history of one pod.
func (o *observer) podHistoryOf(uid types.UID) (podHistory, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	h, ok := o.pods[uid]
	if !ok {
		return podHistory{}, false
	}
	c := *h
	c.phases = slices.Clone(h.phases)
	return c, true
}

// jobsTogether are the moments when more than one TFJob held nodes.
func (o *observer) jobsTogether() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.together)
}

func (h podHistory) String() string {
	s := fmt.Sprintf("%s/%s node %q phases %v", h.namespace, h.name, h.node, h.phases)
	if h.disruption != "" {
		s += " DisruptionTarget/" + h.disruption
	}
	if h.gone {
		s += " gone"
	}
	return s
}

// String is the observed history, for a failing test's log.
func (o *observer) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var b strings.Builder
	var keys []string
	for k := range o.jobs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h := o.jobs[k]
		fmt.Fprintf(&b, "History of TFJob %s: conditions %v, max restarts %d, max disruptions %d\n", k, h.conditions, h.maxRestarts, h.maxDisruptions)
	}
	var pods []string
	for _, h := range o.pods {
		pods = append(pods, "History of pod "+h.String())
	}
	sort.Strings(pods)
	for _, p := range pods {
		b.WriteString(p + "\n")
	}
	if len(o.together) > 0 {
		fmt.Fprintf(&b, "TFJobs holding nodes together: %v\n", o.together)
	}
	return b.String()
}
