//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// replicaKey names one replica of a TFJob: "job/type/index".
type replicaKey string

func replicaOf(pod *corev1.Pod) replicaKey {
	l := pod.Labels
	return replicaKey(l[kubeflowv1.JobNameLabel] + "/" + l[kubeflowv1.ReplicaTypeLabel] + "/" + l[kubeflowv1.ReplicaIndexLabel])
}

// podLife is what a fault run saw of one pod (one UID). born and ended
// are positions in the order the watch delivered events, so that two
// pods of a replica compare without trusting clocks.
type podLife struct {
	name    string
	job     string
	replica replicaKey
	born    int64
	// ended is when the pod stopped being live: it reached Succeeded or
	// Failed, or was gone; 0 while it is live.
	ended     int64
	succeeded bool
	failed    bool
	exitCode  int32
	// disruption is the reason of a DisruptionTarget=True condition.
	disruption string
	// deletedLive is the revision at which the pod was first seen being
	// deleted before it succeeded or failed; 0 if it never was.
	deletedLive uint64
	gone        bool
	last        *corev1.Pod
}

// live reports whether the pod is neither terminal nor gone.
func (l *podLife) live() bool { return l.ended == 0 }

func (l *podLife) String() string {
	s := fmt.Sprintf("%s (%s) live [%d, %d]", l.name, l.replica, l.born, l.ended)
	switch {
	case l.succeeded:
		s += " succeeded"
	case l.failed:
		s += fmt.Sprintf(" failed with %d", l.exitCode)
	}
	if l.disruption != "" {
		s += " disrupted by " + l.disruption
	}
	if l.deletedLive != 0 {
		s += fmt.Sprintf(" deleted while live at revision %d", l.deletedLive)
	}
	if l.gone {
		s += " gone"
	}
	return s
}

// podWatch watches every pod and TFJob of a namespace for a whole fault
// run and keeps each pod's life and when each job finished. Unlike
// polling it misses no state a pod held between two looks, and its order
// of events is the apiserver's.
type podWatch struct {
	mu   sync.Mutex
	seq  int64
	pods map[types.UID]*podLife
	// finished is the resourceVersion at which each job was first seen
	// Succeeded or Failed. Pod and TFJob versions are revisions of the
	// same etcd, so they order a pod's deletion against its job's end.
	finished map[string]uint64
	// relists counts the times the pod watch had to list again (the
	// apiserver lost its place); a pod that came and went in between
	// would be missed, so a failing check reports it.
	relists int
}

func watchPods(ctx context.Context, c client.WithWatch, ns string) *podWatch {
	w := &podWatch{pods: map[types.UID]*podLife{}, finished: map[string]uint64{}}
	go listWatch(ctx, c, ns, &corev1.PodList{}, w.resync, w.handle)
	go listWatch(ctx, c, ns, &kubeflowv1.TFJobList{}, func(objs []client.Object) {
		for _, obj := range objs {
			w.handleJob(obj, false)
		}
	}, w.handleJob)
	return w
}

// listWatch lists, then watches from the list's resourceVersion, resuming
// after a watch ends (an apiserver restart ends every watch) and listing
// again only when the apiserver no longer has the version.
func listWatch(ctx context.Context, c client.WithWatch, ns string, list client.ObjectList, resync func([]client.Object), handle func(client.Object, bool)) {
	for ctx.Err() == nil {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			pause(ctx)
			continue
		}
		items, _ := meta.ExtractList(l)
		objs := make([]client.Object, 0, len(items))
		for _, item := range items {
			objs = append(objs, item.(client.Object))
		}
		resync(objs)
		rv := l.GetResourceVersion()
		for ctx.Err() == nil {
			watcher, err := c.Watch(ctx, list.DeepCopyObject().(client.ObjectList), &client.ListOptions{Namespace: ns, Raw: &metav1.ListOptions{ResourceVersion: rv}})
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				break
			}
			if err != nil {
				// A refused connection: the apiserver is restarting.
				// Try the same version again.
				pause(ctx)
				continue
			}
			next, ok := follow(watcher, handle)
			watcher.Stop()
			if !ok {
				break
			}
			if next != "" {
				rv = next
			}
		}
	}
}

// resync takes a fresh list of pods: pods missing from it are gone (they
// ended first), then every listed pod is handled.
func (w *podWatch) resync(pods []client.Object) {
	w.mu.Lock()
	listed := map[types.UID]bool{}
	for _, pod := range pods {
		listed[pod.GetUID()] = true
	}
	if len(w.pods) > 0 {
		w.relists++
	}
	for uid, l := range w.pods {
		if !listed[uid] && !l.gone {
			w.seq++
			l.gone = true
			if l.ended == 0 {
				l.ended = w.seq
			}
		}
	}
	w.mu.Unlock()
	for _, pod := range pods {
		w.handle(pod, false)
	}
}

func (w *podWatch) handleJob(obj client.Object, _ bool) {
	job, ok := obj.(*kubeflowv1.TFJob)
	if !ok || !finishedJob(job) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, seen := w.finished[job.Name]; !seen {
		w.finished[job.Name] = revision(job)
	}
}

// revision is an object's resourceVersion as the etcd revision it is.
func revision(obj client.Object) uint64 {
	rv, _ := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	return rv
}

func (w *podWatch) handle(obj client.Object, deleted bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Labels[kubeflowv1.JobNameLabel] == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	l := w.pods[pod.UID]
	if l == nil {
		l = &podLife{name: pod.Name, job: pod.Labels[kubeflowv1.JobNameLabel], replica: replicaOf(pod), born: w.seq}
		w.pods[pod.UID] = l
	}
	l.last = pod.DeepCopy()
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			l.disruption = c.Reason
		}
	}
	if l.deletedLive == 0 && pod.DeletionTimestamp != nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		l.deletedLive = revision(pod)
	}
	if l.ended == 0 {
		switch {
		case pod.Status.Phase == corev1.PodSucceeded:
			l.succeeded, l.ended = true, w.seq
		case pod.Status.Phase == corev1.PodFailed:
			l.failed, l.ended = true, w.seq
			if t := tensorflowTermination(pod); t != nil {
				l.exitCode = t.ExitCode
			}
		case deleted:
			l.ended = w.seq
		}
	}
	l.gone = l.gone || deleted
}

func tensorflowTermination(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == kubeflowv1.ContainerName {
			return s.State.Terminated
		}
	}
	return nil
}

// lives are copies of the lives of the pods of a job, oldest first.
func (w *podWatch) lives(job string) []podLife {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []podLife
	for _, l := range w.pods {
		if l.job == job {
			out = append(out, *l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].born < out[j].born })
	return out
}

// life is a copy of the life of one pod; false if the watch never saw it.
func (w *podWatch) life(uid types.UID) (podLife, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	l, ok := w.pods[uid]
	if !ok {
		return podLife{}, false
	}
	return *l, true
}

// first is a copy of the life of the first pod of a replica; false
// before the replica had a pod.
func (w *podWatch) first(replica replicaKey) (*podLife, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var first *podLife
	for _, l := range w.pods {
		if l.replica == replica && (first == nil || l.born < first.born) {
			first = l
		}
	}
	if first == nil {
		return nil, false
	}
	c := *first
	return &c, true
}

// overlaps are the replicas that had two live pods at once, each
// described with its pods.
func (w *podWatch) overlaps() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	byReplica := map[replicaKey][]*podLife{}
	for _, l := range w.pods {
		byReplica[l.replica] = append(byReplica[l.replica], l)
	}
	var found []string
	for replica, lives := range byReplica {
		sort.Slice(lives, func(i, j int) bool { return lives[i].born < lives[j].born })
		for i := 1; i < len(lives); i++ {
			prev := lives[i-1]
			if prev.ended == 0 || prev.ended > lives[i].born {
				found = append(found, fmt.Sprintf("%s: %v and %v", replica, prev, lives[i]))
			}
		}
	}
	sort.Strings(found)
	return found
}

// counts are the pods seen of a job that failed (and were not
// disrupted), and that were disrupted: a DisruptionTarget condition, or a
// deletion by anyone while the pod ran and its job had not finished (the
// operator itself stops running pods only once the job is done), before
// the pod could succeed.
func (w *podWatch) counts(job string) (failed, disrupted int) {
	w.mu.Lock()
	end, done := w.finished[job]
	w.mu.Unlock()
	for _, l := range w.lives(job) {
		deletedBeforeEnd := l.deletedLive != 0 && (!done || l.deletedLive < end)
		switch {
		case l.succeeded:
		case l.disruption != "" || deletedBeforeEnd:
			disrupted++
		case l.failed:
			failed++
		}
	}
	return failed, disrupted
}

// describe is the history of a job's pods, for a failure message.
func (w *podWatch) describe(job string) string {
	w.mu.Lock()
	end := w.finished[job]
	w.mu.Unlock()
	parts := []string{fmt.Sprintf("job finished at revision %d", end)}
	for _, l := range w.lives(job) {
		parts = append(parts, l.String())
	}
	return strings.Join(parts, "; ")
}

// finishedCount is the number of jobs the watch has seen finish.
func (w *podWatch) finishedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.finished)
}

func (w *podWatch) relistCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.relists
}

func (w *podWatch) size() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pods)
}
