package tfjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// cond is a condition last updated at updated and last changed at changed.
func cond(ctype kubeflowv1.JobConditionType, status corev1.ConditionStatus, reason, message string, updated, changed time.Time) kubeflowv1.JobCondition {
	return kubeflowv1.JobCondition{
		Type: ctype, Status: status, Reason: reason, Message: message,
		LastUpdateTime: metav1.NewTime(updated), LastTransitionTime: metav1.NewTime(changed),
	}
}

func TestSetCondition(t *testing.T) {
	t0, now := ago(10*time.Minute), testNow
	const (
		True  = corev1.ConditionTrue
		False = corev1.ConditionFalse
	)
	created := cond(kubeflowv1.JobCreated, True, reasonCreated, "created", t0, t0)
	runningSince := cond(kubeflowv1.JobRunning, True, reasonRunning, "running", t0, t0)
	cases := map[string]struct {
		start       []kubeflowv1.JobCondition
		ctype       kubeflowv1.JobConditionType
		status      corev1.ConditionStatus
		reason      string
		message     string
		wantChanged bool
		want        []kubeflowv1.JobCondition
	}{
		"the first condition": {
			ctype: kubeflowv1.JobCreated, status: True, reason: reasonCreated, message: "created",
			wantChanged: true,
			want:        []kubeflowv1.JobCondition{cond(kubeflowv1.JobCreated, True, reasonCreated, "created", now, now)},
		},
		"the same condition again changes nothing": {
			start: []kubeflowv1.JobCondition{created, runningSince},
			ctype: kubeflowv1.JobCreated, status: True, reason: reasonCreated, message: "created",
			want: []kubeflowv1.JobCondition{created, runningSince},
		},
		"a new message keeps lastTransitionTime": {
			start: []kubeflowv1.JobCondition{created, runningSince},
			ctype: kubeflowv1.JobRunning, status: True, reason: reasonRunning, message: "still running",
			wantChanged: true,
			want:        []kubeflowv1.JobCondition{created, cond(kubeflowv1.JobRunning, True, reasonRunning, "still running", now, t0)},
		},
		"a new status sets lastTransitionTime": {
			start: []kubeflowv1.JobCondition{created, cond(kubeflowv1.JobRunning, False, reasonRunning, "stopped", t0, t0)},
			ctype: kubeflowv1.JobRunning, status: True, reason: reasonRunning, message: "running",
			wantChanged: true,
			want:        []kubeflowv1.JobCondition{created, cond(kubeflowv1.JobRunning, True, reasonRunning, "running", now, now)},
		},
		"Running replaces Restarting": {
			start: []kubeflowv1.JobCondition{created, cond(kubeflowv1.JobRestarting, True, reasonRestarting, "restarting", t0, t0)},
			ctype: kubeflowv1.JobRunning, status: True, reason: reasonRunning, message: "running",
			wantChanged: true,
			want:        []kubeflowv1.JobCondition{created, cond(kubeflowv1.JobRunning, True, reasonRunning, "running", now, now)},
		},
		"Restarting replaces Running": {
			start: []kubeflowv1.JobCondition{created, runningSince},
			ctype: kubeflowv1.JobRestarting, status: True, reason: reasonRestarting, message: "restarting",
			wantChanged: true,
			want:        []kubeflowv1.JobCondition{created, cond(kubeflowv1.JobRestarting, True, reasonRestarting, "restarting", now, now)},
		},
		"Succeeded turns Running False and goes last": {
			start: []kubeflowv1.JobCondition{created, runningSince},
			ctype: kubeflowv1.JobSucceeded, status: True, reason: reasonSucceeded, message: "done",
			wantChanged: true,
			want: []kubeflowv1.JobCondition{
				created,
				cond(kubeflowv1.JobRunning, False, reasonRunning, "running", t0, now),
				cond(kubeflowv1.JobSucceeded, True, reasonSucceeded, "done", now, now),
			},
		},
		"Failed turns Running False and goes last": {
			start: []kubeflowv1.JobCondition{created, runningSince},
			ctype: kubeflowv1.JobFailed, status: True, reason: reasonFailed, message: "failed",
			wantChanged: true,
			want: []kubeflowv1.JobCondition{
				created,
				cond(kubeflowv1.JobRunning, False, reasonRunning, "running", t0, now),
				cond(kubeflowv1.JobFailed, True, reasonFailed, "failed", now, now),
			},
		},
		"Failed leaves a Running that is already False alone": {
			start: []kubeflowv1.JobCondition{created, cond(kubeflowv1.JobRunning, False, reasonRunning, "stopped", t0, t0)},
			ctype: kubeflowv1.JobFailed, status: True, reason: reasonFailed, message: "failed",
			wantChanged: true,
			want: []kubeflowv1.JobCondition{
				created,
				cond(kubeflowv1.JobRunning, False, reasonRunning, "stopped", t0, t0),
				cond(kubeflowv1.JobFailed, True, reasonFailed, "failed", now, now),
			},
		},
		"Suspended True turns Running False": {
			start: []kubeflowv1.JobCondition{created, runningSince},
			ctype: kubeflowv1.JobSuspended, status: True, reason: reasonSuspended, message: "suspended",
			wantChanged: true,
			want: []kubeflowv1.JobCondition{
				created,
				cond(kubeflowv1.JobRunning, False, reasonRunning, "running", t0, now),
				cond(kubeflowv1.JobSuspended, True, reasonSuspended, "suspended", now, now),
			},
		},
		"Suspended False leaves Running alone": {
			start: []kubeflowv1.JobCondition{created, runningSince, cond(kubeflowv1.JobSuspended, True, reasonSuspended, "suspended", t0, t0)},
			ctype: kubeflowv1.JobSuspended, status: False, reason: reasonResumed, message: "resumed",
			wantChanged: true,
			want: []kubeflowv1.JobCondition{
				created, runningSince,
				cond(kubeflowv1.JobSuspended, False, reasonResumed, "resumed", now, now),
			},
		},
		"an updated condition moves last, so the last one is the state": {
			start: []kubeflowv1.JobCondition{
				created,
				cond(kubeflowv1.JobSuspended, False, reasonResumed, "resumed", t0, t0),
				cond(kubeflowv1.JobRunning, False, reasonRunning, "running", t0, t0),
			},
			ctype: kubeflowv1.JobSuspended, status: True, reason: reasonSuspended, message: "suspended",
			wantChanged: true,
			want: []kubeflowv1.JobCondition{
				created,
				cond(kubeflowv1.JobRunning, False, reasonRunning, "running", t0, t0),
				cond(kubeflowv1.JobSuspended, True, reasonSuspended, "suspended", now, now),
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			start := append([]kubeflowv1.JobCondition(nil), tc.start...)
			status := kubeflowv1.JobStatus{Conditions: tc.start}
			setCondition(&status, tc.ctype, tc.status, tc.reason, tc.message, metav1.NewTime(now))
			if changed := !cmp.Equal(start, status.Conditions); changed != tc.wantChanged {
				t.Errorf("setCondition changed the conditions: %v, want %v", changed, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.want, status.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(start, tc.start); diff != "" {
				t.Errorf("setCondition wrote into the slice it was given (-before +after):\n%s", diff)
			}
			last := status.Conditions[len(status.Conditions)-1]
			if tc.wantChanged && (last.Type != tc.ctype || last.Status != tc.status) {
				t.Errorf("last condition is %s=%s, want %s=%s", last.Type, last.Status, tc.ctype, tc.status)
			}
		})
	}
}

func TestIsFinished(t *testing.T) {
	t0 := ago(time.Minute)
	cases := map[string]struct {
		conditions []kubeflowv1.JobCondition
		want       bool
	}{
		"no condition":   {want: false},
		"running":        {conditions: []kubeflowv1.JobCondition{cond(kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, "", t0, t0)}},
		"succeeded":      {conditions: []kubeflowv1.JobCondition{cond(kubeflowv1.JobSucceeded, corev1.ConditionTrue, reasonSucceeded, "", t0, t0)}, want: true},
		"failed":         {conditions: []kubeflowv1.JobCondition{cond(kubeflowv1.JobFailed, corev1.ConditionTrue, reasonFailed, "", t0, t0)}, want: true},
		"failed False":   {conditions: []kubeflowv1.JobCondition{cond(kubeflowv1.JobFailed, corev1.ConditionFalse, reasonFailed, "", t0, t0)}},
		"suspended True": {conditions: []kubeflowv1.JobCondition{cond(kubeflowv1.JobSuspended, corev1.ConditionTrue, reasonSuspended, "", t0, t0)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := isFinished(&kubeflowv1.JobStatus{Conditions: tc.conditions}); got != tc.want {
				t.Errorf("isFinished = %v, want %v", got, tc.want)
			}
		})
	}
}
