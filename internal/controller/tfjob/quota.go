package tfjob

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// quotaFreed passes a ResourceQuota that makes room: some amount used
// fell, some hard limit rose, or the quota is gone. A job whose pod a
// quota refused is then woken at once, not after the work queue's backoff,
// which grows to minutes while the quota stays full.
var quotaFreed = predicate.Funcs{
	CreateFunc:  func(ctrlevent.CreateEvent) bool { return false },
	DeleteFunc:  func(ctrlevent.DeleteEvent) bool { return true },
	GenericFunc: func(ctrlevent.GenericEvent) bool { return false },
	UpdateFunc: func(e ctrlevent.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*corev1.ResourceQuota)
		after, ok2 := e.ObjectNew.(*corev1.ResourceQuota)
		return ok1 && ok2 && makesRoom(before.Status, after.Status)
	},
}

// makesRoom reports whether a quota's status went from before to after by
// freeing some resource.
func makesRoom(before, after corev1.ResourceQuotaStatus) bool {
	for name, was := range before.Used {
		if now, ok := after.Used[name]; ok && now.Cmp(was) < 0 {
			return true
		}
	}
	for name, now := range after.Hard {
		if was, ok := before.Hard[name]; !ok || now.Cmp(was) > 0 {
			return true
		}
	}
	return false
}

// refusedJobs are the jobs whose last pass could not create a pod: the
// ones a ResourceQuota that makes room wakes, rather than every job of
// its namespace at every pod deletion.
type refusedJobs struct {
	mu   sync.Mutex
	jobs map[types.NamespacedName]struct{}
}

func newRefusedJobs() *refusedJobs {
	return &refusedJobs{jobs: map[types.NamespacedName]struct{}{}}
}

// note records whether job's pass was refused a pod.
func (s *refusedJobs) note(job types.NamespacedName, refused bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if refused {
		s.jobs[job] = struct{}{}
	} else {
		delete(s.jobs, job)
	}
}

// wake is the refused jobs of the quota's namespace.
func (s *refusedJobs) wake(_ context.Context, quota client.Object) []reconcile.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var reqs []reconcile.Request
	for job := range s.jobs {
		if job.Namespace == quota.GetNamespace() {
			reqs = append(reqs, reconcile.Request{NamespacedName: job})
		}
	}
	return reqs
}
