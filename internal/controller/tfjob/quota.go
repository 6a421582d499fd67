package tfjob

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
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

// unfinishedJobsIn are the jobs of the quota's namespace that may still
// create pods.
func (r *Reconciler) unfinishedJobsIn(ctx context.Context, quota client.Object) []reconcile.Request {
	var jobs kubeflowv1.TFJobList
	if err := r.client.List(ctx, &jobs, client.InNamespace(quota.GetNamespace())); err != nil {
		log.FromContext(ctx).Error(err, "Listing TFJobs a ResourceQuota made room for", "resourceQuota", client.ObjectKeyFromObject(quota))
		return nil
	}
	var reqs []reconcile.Request
	for i := range jobs.Items {
		if !isFinished(&jobs.Items[i].Status) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&jobs.Items[i])})
		}
	}
	return reqs
}
