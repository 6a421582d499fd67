package tfjob

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// jobNameIndex indexes the cached pods and services by the job-name label,
// so that a pass reads its own job's children, not the namespace's.
const jobNameIndex = "tfjob.jobName"

func indexByJobName(ctx context.Context, indexer client.FieldIndexer) error {
	byLabel := func(o client.Object) []string {
		if name, ok := o.GetLabels()[kubeflowv1.JobNameLabel]; ok {
			return []string{name}
		}
		return nil
	}
	if err := indexer.IndexField(ctx, &corev1.Pod{}, jobNameIndex, byLabel); err != nil {
		return fmt.Errorf("indexing pods by job name: %w", err)
	}
	if err := indexer.IndexField(ctx, &corev1.Service{}, jobNameIndex, byLabel); err != nil {
		return fmt.Errorf("indexing services by job name: %w", err)
	}
	return nil
}

// observe reads the job's pods and services from the cache, the progress
// it reported and the reclaimed supply, and whether what its pods need
// (PriorityClasses, the PodGroup) exists.
func (r *Reconciler) observe(ctx context.Context, job *kubeflowv1.TFJob) (observed, error) {
	obs := observed{
		pods:          map[string]*corev1.Pod{},
		services:      map[string]*corev1.Service{},
		takenPods:     sets.New[string](),
		takenServices: sets.New[string](),
	}
	if r.opts.Progress != nil {
		if p, ok := r.opts.Progress.Take(job.UID); ok {
			obs.progress = &p
		}
	}
	if r.opts.Supply != nil {
		s := r.opts.Supply.Supply()
		obs.supply = &s
	}
	if err := r.observeChildren(ctx, job, &obs); err != nil {
		return obs, err
	}
	var err error
	if obs.missingPriorityClasses, err = r.missingPriorityClasses(ctx, job); err != nil {
		return obs, err
	}
	if r.opts.Loans != nil && len(obs.missingPriorityClasses) == 0 && !hasCondition(&job.Status, kubeflowv1.JobCreated) && !suspended(job) && !isFinished(&job.Status) {
		obs.loanWait, obs.loanRetry = r.opts.Loans.Hold(job, r.clock.Now())
	}
	obs.hasPodGroup, err = r.hasPodGroup(ctx, job)
	return obs, err
}

// observeChildren sorts the pods and services with the job's labels.
// Objects that are not its replicas (ownReplica) are not adopted, whatever
// owner they name: their names are noted as taken, and the tracking
// finalizer of the job's own leftovers noted for release.
func (r *Reconciler) observeChildren(ctx context.Context, job *kubeflowv1.TFJob, obs *observed) error {
	log := log.FromContext(ctx)
	opts := []client.ListOption{client.InNamespace(job.Namespace), client.MatchingFields{jobNameIndex: job.Name}}
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, opts...); err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		err := ownReplica(pod, job)
		switch {
		case err == nil:
			obs.pods[pod.Name] = pod
			continue
		case stray(pod, job):
			obs.strays = append(obs.strays, pod)
		}
		log.V(1).Info("Not adopting a pod labelled with the job's name: it is not one of the job's replicas", "pod", pod.Name, "why", err.Error())
		obs.takenPods.Insert(pod.Name)
	}
	var services corev1.ServiceList
	if err := r.client.List(ctx, &services, opts...); err != nil {
		return fmt.Errorf("listing services: %w", err)
	}
	for i := range services.Items {
		svc := &services.Items[i]
		if ownReplica(svc, job) == nil {
			obs.services[svc.Name] = svc
		} else {
			obs.takenServices.Insert(svc.Name)
		}
	}
	return nil
}

// missingPriorityClasses names the PriorityClasses the job's pods would
// use that do not exist.
func (r *Reconciler) missingPriorityClasses(ctx context.Context, job *kubeflowv1.TFJob) ([]string, error) {
	var missing []string
	for _, name := range colocation.JobPriorityClasses(job, r.opts.OfflinePriorityClass) {
		err := r.client.Get(ctx, client.ObjectKey{Name: name}, &schedulingv1.PriorityClass{})
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
		case err != nil:
			return nil, fmt.Errorf("reading PriorityClass %s: %w", name, err)
		}
	}
	return missing, nil
}

// hasPodGroup says whether the job's PodGroup exists, under a gang
// scheduler.
func (r *Reconciler) hasPodGroup(ctx context.Context, job *kubeflowv1.TFJob) (bool, error) {
	if r.opts.Gang == colocation.GangNone {
		return false, nil
	}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(job), EmptyPodGroup(r.opts.Gang))
	if client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("reading the PodGroup: %w", err)
	}
	return err == nil, nil
}
