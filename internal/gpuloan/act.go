package gpuloan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/metrics"
	"github.com/backfill-dev/backfill/internal/reclaim"
	"github.com/backfill-dev/backfill/internal/tide"
)

// notice gives a job's running pods the stop notice of a return: the
// reason GPUsReturnedToOnline and the deadline, which the tensorflow
// container reads in its downward-API file, as it reads the operator's own
// notices. Then the job's annotation records the return.
func (c *Controller) notice(ctx context.Context, l *jobLoan, r tide.Return, pods []*clusterview.Pod, now time.Time) error {
	deadline := r.Deadline.Truncate(time.Second)
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.StopReason != "" {
			continue // stopping already, for another reason or for this one
		}
		patch, err := colocation.StopNoticePatch(p.UID, colocation.ReasonGPUsReturnedToOnline, deadline)
		if err != nil {
			return err
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
		if err := c.client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("telling pod %s/%s of TFJob %s to checkpoint before its GPUs return to online work: %w", p.Namespace, p.Name, l.key, err)
		}
	}
	state := l.state
	state.Phase, state.Pool, state.GPUs = PhaseReturning, l.pool, l.gpus
	state.CheckpointIntervalSeconds = int64(c.intervals.of(l.key, l.state).Round(time.Second) / time.Second)
	state.NoticeAt, state.Deadline, state.Short, state.Late = now.Truncate(time.Second), deadline, r.Short, false
	state.NextLoan = r.NextLoan
	if err := c.writeState(ctx, l.job, state, nil); err != nil {
		return err
	}
	l.state = state
	c.log.Info("Returning a GPU loan to online work", "tfjob", l.key, "pool", l.pool, "gpus", l.gpus, "deadline", deadline, "short", r.Short)
	c.recorder.Eventf(l.job, nil, corev1.EventTypeNormal, colocation.ReasonGPUsReturnedToOnline, "Notice",
		"Online work needs the %d GPUs the job borrowed in pool %s back by %s: its pods may checkpoint until then (a reported checkpoint stops them early), then the job pauses until its next loan",
		l.gpus, l.pool, readable(deadline))
	return nil
}

// due reports whether a returning job is to stop now: its deadline came,
// or it reported a checkpoint made after its notice (the handshake).
func due(job *kubeflowv1.TFJob, s LoanState, now time.Time) bool {
	return !now.Before(s.Deadline) || checkpointAfter(job, s.NoticeAt)
}

// checkpointAfter reports whether the job's last checkpoint came after t.
func checkpointAfter(job *kubeflowv1.TFJob, t time.Time) bool {
	p := job.Status.Progress
	return p != nil && p.CheckpointTime != nil && p.CheckpointTime.After(t)
}

// pause ends a return: the job is suspended, so that the operator creates
// no pod for it and counts nothing against backoffLimit, and its pods are
// evicted (the operator's suspension deletes any the Eviction API refuses,
// their deadline past). A handshake measures the job's checkpoint time.
func (c *Controller) pause(ctx context.Context, job *kubeflowv1.TFJob, s LoanState, pods []*clusterview.Pod, next time.Time, now time.Time) error {
	key := job.Namespace + "/" + job.Name
	if checkpointAfter(job, s.NoticeAt) {
		s.CheckpointSeconds = int64(math.Ceil(job.Status.Progress.CheckpointTime.Sub(s.NoticeAt).Seconds()))
	}
	s.Phase, s.ReturnedAt, s.NextLoan = PhasePaused, now.Truncate(time.Second), next
	suspend := true
	if err := c.writeState(ctx, job, s, &suspend); err != nil {
		return err
	}
	outcome := metrics.ReturnOnTime
	if s.Short || s.Late {
		outcome = metrics.ReturnLate
	}
	metrics.GPULoanReturned(s.Pool, outcome)
	if lost := workLost(job, s, pods, now); lost > 0 {
		metrics.GPULoanLost(s.Pool, s.GPUs, lost)
	}
	var errs []error
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		err := reclaim.Evict(ctx, c.client, p.Namespace, p.Name, string(p.UID), false)
		switch {
		case err == nil, apierrors.IsNotFound(err), apierrors.IsConflict(err):
		case apierrors.IsTooManyRequests(err):
			c.log.Info("The Eviction API refuses to evict a paused job's pod (a PodDisruptionBudget?): the operator stops it, its deadline past", "pod", p.Namespace+"/"+p.Name)
		default:
			errs = append(errs, fmt.Errorf("evicting pod %s/%s of paused TFJob %s: %w", p.Namespace, p.Name, key, err))
		}
	}
	c.log.Info("Paused a TFJob: its GPUs are back with online work", "tfjob", key, "pool", s.Pool, "gpus", s.GPUs, "outcome", outcome, "nextLoan", s.NextLoan)
	c.recorder.Eventf(job, nil, corev1.EventTypeNormal, colocation.ReasonGPUsReturnedToOnline, "Pause", "The job %s", s.PausedMessage())
	return errors.Join(errs...)
}

// workLost is the training a pause undoes: none after a checkpoint made on
// the notice, else the time since the job's last checkpoint or, when it
// made none on this loan, since its first pod started.
func workLost(job *kubeflowv1.TFJob, s LoanState, pods []*clusterview.Pod, now time.Time) time.Duration {
	if checkpointAfter(job, s.NoticeAt) {
		return 0
	}
	var from time.Time
	for _, p := range pods {
		if !p.Started.IsZero() && (from.IsZero() || p.Started.Before(from)) {
			from = p.Started
		}
	}
	if p := job.Status.Progress; p != nil && p.CheckpointTime != nil && p.CheckpointTime.After(from) {
		from = p.CheckpointTime.Time
	}
	if from.IsZero() {
		return 0
	}
	return max(now.Sub(from), 0)
}

// resume starts a paused job on a new loan.
func (c *Controller) resume(ctx context.Context, job *kubeflowv1.TFJob, s LoanState, a tide.Admission, now time.Time) error {
	s.Phase, s.ResumedAt, s.NoticeAt, s.Deadline, s.Short, s.Late, s.NextLoan = PhaseLent, now.Truncate(time.Second), time.Time{}, time.Time{}, false, false, time.Time{}
	suspend := false
	if err := c.writeState(ctx, job, s, &suspend); err != nil {
		return err
	}
	key := job.Namespace + "/" + job.Name
	c.log.Info("Resumed a paused TFJob on a new GPU loan", "tfjob", key, "pool", s.Pool, "gpus", s.GPUs, "until", a.Until, "notice", a.Notice)
	c.recorder.Eventf(job, nil, corev1.EventTypeNormal, "GPULoanResumed", "Resume",
		"GPUs of pool %s are free until online work needs them again: the job resumes on %d of them until about %s", s.Pool, s.GPUs, readable(a.Until))
	return nil
}

// writeState writes a job's loan state, the words of its Suspended
// condition while paused, and with suspend non-nil runPolicy.suspend, in
// one merge patch of those fields alone: the operator's status writes and
// a user's edits of anything else never conflict with it.
func (c *Controller) writeState(ctx context.Context, job *kubeflowv1.TFJob, s LoanState, suspend *bool) error {
	var paused any // null removes the annotation
	if s.Phase == PhasePaused {
		paused = s.PausedMessage()
	}
	patch := map[string]any{"metadata": map[string]any{
		"annotations": map[string]any{LoanAnnotation: s.annotation(), colocation.GPULoanPausedAnnotation: paused},
	}}
	if suspend != nil {
		patch["spec"] = map[string]any{"runPolicy": map[string]any{"suspend": *suspend}}
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	obj := &kubeflowv1.TFJob{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name}}
	if err := c.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("writing the GPU loan of TFJob %s/%s: %w", job.Namespace, job.Name, err)
	}
	return nil
}
