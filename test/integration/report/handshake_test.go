//go:build integration

package report

import (
	"context"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
	"github.com/backfill-dev/backfill/test/framework"
)

// TestCheckpointHandshake: a suspended job's running pod gets the stop
// notice and is not stopped while the notice runs; a checkpoint reported
// after the notice stops it at once, long before the notice runs out.
func TestCheckpointHandshake(t *testing.T) {
	ns := newNamespace(t)
	job, pods := runningJob(t, ns, "handshake", 1)
	pod := pods[0]
	token := podToken(t, pod, tfjob.ReportAudience)
	// A checkpoint from before the notice does not count.
	wantReport(t, ns, "handshake", bearer(token), `{"step": 10, "checkpoint": true}`, http.StatusNoContent, "")
	waitForJob(t, job, "the first checkpoint", func(st kubeflowv1.JobStatus) bool {
		return st.Progress != nil && st.Progress.CheckpointStep != nil && *st.Progress.CheckpointStep == 10
	})

	framework.Eventually(t, "the job to be suspended", func(ctx context.Context) (bool, error) {
		got, err := getJob(ctx, job)
		if err != nil {
			return false, err
		}
		got.Spec.RunPolicy.Suspend = ptr.To(true)
		err = apiServer.Client.Update(ctx, got)
		return err == nil, ignoreConflict(err)
	})
	var noticed corev1.Pod
	framework.Eventually(t, "the stop notice", func(ctx context.Context) (bool, error) {
		err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(pod), &noticed)
		return err == nil && noticed.Annotations[tfjob.StopAtAnnotation] != "", err
	})
	stopAt, err := time.Parse(time.RFC3339, noticed.Annotations[tfjob.StopAtAnnotation])
	if err != nil {
		t.Fatalf("%s: %v", tfjob.StopAtAnnotation, err)
	}
	if reason := noticed.Annotations[tfjob.StopReasonAnnotation]; reason != "TFJobSuspended" {
		t.Errorf("stop reason %q, want TFJobSuspended", reason)
	}
	// Reports and checkpoints are kept to the second: one the notice's
	// own second would not be after it.
	framework.Consistently(t, "the pod stopped before its notice ran out, with no checkpoint since", quiet, func(ctx context.Context) (bool, error) {
		return stopped(ctx, pod)
	})

	wantReport(t, ns, "handshake", bearer(token), `{"step": 20, "checkpoint": true}`, http.StatusNoContent, "")
	reported := time.Now()
	framework.Eventually(t, "the pod to stop after its checkpoint", func(ctx context.Context) (bool, error) {
		return stopped(ctx, pod)
	})
	if left := time.Until(stopAt); left < stopNotice/2 {
		t.Errorf("the pod stopped %v after the checkpoint, %v before its notice ran out: want it at once", time.Since(reported), left)
	}
	waitForJob(t, job, "the checkpoint in the status", func(st kubeflowv1.JobStatus) bool {
		return st.Progress != nil && st.Progress.CheckpointStep != nil && *st.Progress.CheckpointStep == 20
	})
}

func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}
