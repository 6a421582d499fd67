package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// pausedJob is a job the manager's GPU loans paused, as the manager and
// the operator leave it: runPolicy.suspend, the paused annotation, and
// the Suspended condition saying the same. Without the condition, it is
// the job before the operator has seen the pause.
func pausedJob(withCondition bool) *kubeflowv1.TFJob {
	why := "returned 4 GPUs of pool NVIDIA-A100-SXM4-80GB to online work at 2026-12-07 07:25 UTC, next loan from ~2026-12-07 22:10 UTC"
	b := makeJob("ml", "train", 10*time.Hour).replicas(kubeflowv1.ReplicaTypeWorker, 4, 1).
		condition(kubeflowv1.JobCreated, corev1.ConditionTrue, "TFJobCreated", "TFJob ml/train is created.", 10*time.Hour).
		progress(90000, -1, 40*time.Minute, 90000, 40*time.Minute)
	if withCondition {
		b = b.condition(kubeflowv1.JobSuspended, corev1.ConditionTrue, colocation.ReasonGPUsReturnedToOnline, "TFJob ml/train is paused: it "+why, 30*time.Minute)
	} else {
		b = b.condition(kubeflowv1.JobRunning, corev1.ConditionTrue, "TFJobRunning", "TFJob ml/train is running.", 9*time.Hour)
	}
	job := b.obj()
	job.Spec.RunPolicy.Suspend = ptr.To(true)
	job.Annotations = map[string]string{colocation.GPULoanPausedAnnotation: why}
	return job
}

// get shows a paused job as Paused, waiting for GPUsReturnedToOnline, and
// says below the table what it returned and when it may borrow again;
// describe says it in its State and its Suspended condition.
func TestPausedByGPULoans(t *testing.T) {
	const want = "returned 4 GPUs of pool NVIDIA-A100-SXM4-80GB to online work at 2026-12-07 07:25 UTC, next loan from ~2026-12-07 22:10 UTC"
	for name, withCondition := range map[string]bool{"paused": true, "paused-unseen": false} {
		t.Run(name, func(t *testing.T) {
			job := pausedJob(withCondition)
			var out bytes.Buffer
			if err := renderJobTable(&out, []kubeflowv1.TFJob{*job}, jobPods{}, tableOptions{}, fixedNow); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
			if len(lines) != 3 {
				t.Fatalf("get printed %d lines, want a header, a row and the paused line:\n%s", len(lines), out.String())
			}
			if f := strings.Fields(lines[1]); len(f) != 8 || f[1] != "Paused" || f[7] != colocation.ReasonGPUsReturnedToOnline {
				t.Errorf("get row %q: want STATE Paused and WAITING %s", lines[1], colocation.ReasonGPUsReturnedToOnline)
			}
			if lines[2] != "ml/train is paused: it "+want {
				t.Errorf("get's paused line %q, want the job and %q", lines[2], want)
			}

			out.Reset()
			if err := renderDescription(&out, &description{job: job}, fixedNow); err != nil {
				t.Fatal(err)
			}
			described := out.String()
			if !strings.Contains(described, "Paused (by GPU loans: "+want+"; the manager resumes it when a loan is long enough)") {
				t.Errorf("describe's State lacks the pause:\n%s", described)
			}
			if withCondition && !hasFieldsLine(described, "Suspended", "True", colocation.ReasonGPUsReturnedToOnline, "30m", "TFJob", "ml/train", "is", "paused:", "it", "returned") {
				t.Errorf("describe's conditions lack the Suspended condition of GPU loans:\n%s", described)
			}
			checkGolden(t, "describe-"+name, described)
		})
	}
}

// A job the user suspended, or one done after a pause, is not Paused.
func TestNotPausedByGPULoans(t *testing.T) {
	user := makeJob("ml", "held", time.Hour).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).
		condition(kubeflowv1.JobSuspended, corev1.ConditionTrue, "TFJobSuspended", "TFJob ml/held is suspended.", time.Minute).obj()
	user.Spec.RunPolicy.Suspend = ptr.To(true)
	done := pausedJob(true)
	done.Status.Conditions = append(done.Status.Conditions, kubeflowv1.JobCondition{Type: kubeflowv1.JobSucceeded, Status: corev1.ConditionTrue})
	resumed := pausedJob(false)
	resumed.Spec.RunPolicy.Suspend = ptr.To(false)
	for _, job := range []*kubeflowv1.TFJob{user, done, resumed} {
		if why, ok := pausedByLoan(job); ok {
			t.Errorf("%s: paused by GPU loans (%q), want not", job.Name, why)
		}
		if got := stateOf(job); got == pausedState {
			t.Errorf("%s: state %s", job.Name, got)
		}
	}
}

// hasFieldsLine reports whether a line of s starts with the fields.
func hasFieldsLine(s string, fields ...string) bool {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(fields) && slices.Equal(f[:len(fields)], fields) {
			return true
		}
	}
	return false
}
