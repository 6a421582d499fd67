package reclaim

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
)

// ReasonReclaimedForOnline is the reason of the events of an eviction for
// online protection, and of the disruption it counts on the TFJob.
const ReasonReclaimedForOnline = colocation.ReasonReclaimedForOnline

// noticeVictims gives a decision's victims their stop notice: the stop
// reason ReclaimedForOnline, which makes the operator count their end as
// that disruption, and the time they are evicted at the latest
// (evictDueVictims evicts them then, or as soon as their job reports a
// checkpoint). Only a pod the
// Eviction API would evict now (a dry run says so) is noticed: one a
// PodDisruptionBudget protects is left unmarked and keeps what it holds.
// Every request carries the pod's UID, so a replacement of the same name
// is never noticed or evicted in its place. It returns the pods refused.
func (c *Controller) noticeVictims(ctx context.Context, n Node, d Decision) (refused []Pod, err error) {
	resource := deficitResource(d)
	notice := c.noticeFor(d)
	at := c.clock.Now().Add(notice).Truncate(time.Second)
	for _, p := range d.Evict {
		err := c.requestEviction(ctx, p.Namespace, p.Name, p.UID, true)
		if err == nil {
			err = c.notify(ctx, p.Namespace, p.Name, p.UID, &at)
		}
		switch {
		case apierrors.IsTooManyRequests(err):
			refused = append(refused, p)
			metrics.Evicted(resource, metrics.EvictionRefused)
			c.log.Info("The Eviction API refuses to evict an offline pod (a PodDisruptionBudget?): the node keeps offering what it holds", "pod", p.Namespace+"/"+p.Name, "node", n.Name, "error", err.Error())
			continue
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err):
			continue // gone, or replaced: what it held is released
		case err != nil:
			return refused, fmt.Errorf("telling %s/%s on node %s to stop: %w", p.Namespace, p.Name, n.Name, err)
		}
		c.log.Info("Stopping an offline pod for online work", "pod", p.Namespace+"/"+p.Name, "node", n.Name, "at", at,
			"held", d.Held.String(), "need", d.Need.String(), "onlinePeak", d.OnlinePeak.String())
		c.eventOnJob(ctx, p, n, d, at, notice > 0)
		if notice <= 0 {
			errs := c.evictOrWithdrawNotice(ctx, p.Namespace, p.Name, p.UID, resource)
			if errs != nil {
				return refused, errs
			}
		}
	}
	return refused, nil
}

// evictDueVictims evicts the pods given notice for online pods whose time
// has come: the notice ran out, or their job reported a checkpoint after it
// began (the handshake), so that no more work is lost by waiting.
func (c *Controller) evictDueVictims(ctx context.Context, pods []*clusterview.Pod, checkpoints map[string]time.Time, now time.Time) error {
	var errs []error
	for _, p := range pods {
		if p.StopReason != ReasonReclaimedForOnline || p.DeletionTimestamp != nil || !due(p, checkpoints[p.Namespace+"/"+p.TFJob], c.notice, now) {
			continue
		}
		errs = append(errs, c.evictOrWithdrawNotice(ctx, p.Namespace, p.Name, string(p.UID), resourceOf(p)))
	}
	return errors.Join(errs...)
}

// due reports whether a pod under notice is to be evicted now: its notice
// ran out, or its job checkpointed after the notice began.
func due(p *clusterview.Pod, checkpoint time.Time, notice time.Duration, now time.Time) bool {
	return !now.Before(p.StopAt) || checkpoint.After(p.StopAt.Add(-notice))
}

// resourceOf names what a noticed pod is evicted for, for the metric:
// what it holds most of.
func resourceOf(p *clusterview.Pod) string {
	if p.Batch.MilliCPU > 0 {
		return "cpu"
	}
	return "memory"
}

// evictOrWithdrawNotice evicts a pod under notice; a refusal (a
// PodDisruptionBudget that changed its mind since the dry run) takes the
// notice off again, so that a later disruption of the pod is not counted
// as this one.
func (c *Controller) evictOrWithdrawNotice(ctx context.Context, namespace, name, uid, resource string) error {
	err := c.requestEviction(ctx, namespace, name, uid, false)
	switch {
	case err == nil:
		metrics.Evicted(resource, metrics.EvictionEvicted)
		c.log.Info("Evicted an offline pod for online work", "pod", namespace+"/"+name)
		return nil
	case apierrors.IsTooManyRequests(err):
		metrics.Evicted(resource, metrics.EvictionRefused)
		return client.IgnoreNotFound(c.notify(ctx, namespace, name, uid, nil))
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return nil
	}
	return fmt.Errorf("evicting %s/%s: %w", namespace, name, err)
}

// requestEviction asks the Eviction API to evict exactly the pod of uid,
// or with dryRun only whether it would.
func (c *Controller) requestEviction(ctx context.Context, namespace, name, uid string, dryRun bool) error {
	return Evict(ctx, c.client, namespace, name, uid, dryRun)
}

// notify writes the stop notice on a pod, or with at nil takes it off.
func (c *Controller) notify(ctx context.Context, namespace, name, uid string, at *time.Time) error {
	return Notify(ctx, c.client, namespace, name, uid, at)
}

// Evict asks the Eviction API to evict exactly the pod of uid, or with
// dryRun only whether it would. A PodDisruptionBudget's refusal is a
// TooManyRequests error.
func Evict(ctx context.Context, c client.Client, namespace, name, uid string, dryRun bool) error {
	u := types.UID(uid)
	opts := &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &u}}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, DeleteOptions: opts}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	return c.SubResource("eviction").Create(ctx, pod, eviction)
}

// Notify writes the stop notice on a pod (the reason ReclaimedForOnline,
// which makes the operator count the pod's end as that disruption, and
// when it is evicted at the latest), or with at nil takes it off, with the
// pod's UID as a precondition. The tensorflow container reads it in its
// downward-API file, as it reads the operator's own notices.
func Notify(ctx context.Context, c client.Client, namespace, name, uid string, at *time.Time) error {
	var reason string
	var when time.Time
	if at != nil {
		reason, when = ReasonReclaimedForOnline, *at
	}
	patch, err := colocation.StopNoticePatch(types.UID(uid), reason, when)
	if err != nil {
		return err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	return c.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch))
}

// noticeFor is how long a decision's victims are told before they are
// evicted: none when online pods are short of memory, which kills them
// rather than slowing them (memory never waits); the operator's
// --stop-notice when only CPU is short.
func (c *Controller) noticeFor(d Decision) time.Duration {
	if d.Need.Memory > 0 {
		return 0
	}
	return c.notice
}

// deficitResource names the resource whose deficit chose the victims:
// cpu, unless only memory was short.
func deficitResource(d Decision) string {
	if d.Need.MilliCPU > 0 {
		return "cpu"
	}
	return "memory"
}

// eventOnJob tells the stopped pod's TFJob why, and when.
func (c *Controller) eventOnJob(ctx context.Context, p Pod, n Node, d Decision, at time.Time, noticed bool) {
	if p.Job == nil {
		return
	}
	job := &kubeflowv1.TFJob{}
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: p.Job.Namespace, Name: p.Job.Name}, job); err != nil {
		if !apierrors.IsNotFound(err) {
			c.log.Error(err, "Cannot read the TFJob to tell it of an eviction", "tfjob", p.Job.Namespace+"/"+p.Job.Name, "pod", p.Name)
		}
		return
	}
	when := "now, without notice (online pods short of memory do not wait)"
	if noticed {
		when = "at " + at.UTC().Format(time.RFC3339) + ", or as soon as the job reports a checkpoint"
	}
	c.recorder.Eventf(job, nil, corev1.EventTypeWarning, ReasonReclaimedForOnline, "Evict",
		"Evicting pod %s from node %s for online pods %s: they use %s there (CPU that lasted, memory at its peak), leaving less than the eviction margin beside the %s offline pods held, of which %s must go; the pod restarts elsewhere, not charged to backoffLimit",
		p.Name, n.Name, when, Resources{MilliCPU: d.OnlineLasting.MilliCPU, Memory: d.OnlinePeak.Memory}, d.Held, d.Need)
}

// stateChanged tells a node's events when its capacity freezes on stale
// usage or follows usage again.
func (c *Controller) stateChanged(node string, before State, d Decision) {
	obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, UID: types.UID(node)}}
	switch {
	case d.State == StateStale:
		c.recorder.Eventf(obj, nil, corev1.EventTypeWarning, "ReclaimFrozen", "Freeze",
			"%s; reclaimed capacity stays at %s, nothing grows or is evicted until usage is current", d.Why, d.Published)
	case before == StateStale:
		c.recorder.Eventf(obj, nil, corev1.EventTypeNormal, "ReclaimResumed", "Resume",
			"Usage is current again: reclaimed capacity follows it (%s)", d.Why)
	}
}
