package progress

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// TestGoodputHistory plays a job's life pass by pass: it waits 2 minutes
// for capacity, runs 10 minutes with a checkpoint at minute 8, is preempted
// at minute 12 (4 minutes since its checkpoint lost), recovers in 3
// minutes, runs 5 more and succeeds.
func TestGoodputHistory(t *testing.T) {
	created := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return created.Add(time.Duration(m) * time.Minute) }
	st := kubeflowv1.JobStatus{}
	pass := func(m int, running, disrupted bool, mutate func(*kubeflowv1.JobStatus)) {
		t.Helper()
		after := st.DeepCopy()
		if disrupted {
			after.Disruptions++
		}
		if mutate != nil {
			mutate(after)
		}
		Account(&st, after, created, at(m), Pass{AllRunning: running})
		st = *after
	}
	pass(0, false, false, nil)                           // created, waiting
	pass(1, false, false, nil)                           // nothing changes
	pass(2, true, false, nil)                            // every replica runs
	pass(8, true, false, func(s *kubeflowv1.JobStatus) { // a checkpoint, not a phase change
		s.Progress = &kubeflowv1.Progress{Step: 800, ReportTime: metav1.NewTime(at(8)), CheckpointTime: ptrTime(metav1.NewTime(at(8)))}
	})
	if got := TotalsAt(&st, created, at(10)); got.Productive != 8*time.Minute || got.Waiting != 2*time.Minute {
		t.Errorf("at minute 10, running: %+v, want 8m productive (extrapolated), 2m waiting", got)
	}
	pass(12, false, true, nil) // preempted
	pass(15, true, false, nil) // back
	pass(20, false, false, func(s *kubeflowv1.JobStatus) {
		s.Conditions = []kubeflowv1.JobCondition{{Type: kubeflowv1.JobSucceeded, Status: corev1.ConditionTrue}}
	})
	want := Totals{Productive: 11 * time.Minute, ProgressLost: 4 * time.Minute, Recovery: 3 * time.Minute, Waiting: 2 * time.Minute}
	for _, now := range []int{20, 60} { // closed: nothing accrues after the end
		if diff := cmp.Diff(want, TotalsAt(&st, created, at(now))); diff != "" {
			t.Errorf("at minute %d (-want +got):\n%s", now, diff)
		}
	}
	if r := want.Ratio(); r != 0.55 {
		t.Errorf("ratio %v, want 0.55", r)
	}
}

// A job that reports no checkpoint loses all its running time at a
// disruption: silence is not rewarded.
func TestGoodputWithoutCheckpoints(t *testing.T) {
	created := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	before := kubeflowv1.JobStatus{}
	after := before.DeepCopy()
	Account(&before, after, created, created, Pass{AllRunning: true})
	before = *after
	after = before.DeepCopy()
	after.Disruptions = 1
	Account(&before, after, created, created.Add(30*time.Minute), Pass{})
	if got := TotalsAt(after, created, created.Add(30*time.Minute)); got.ProgressLost != 30*time.Minute || got.Productive != 0 {
		t.Errorf("%+v, want all 30m lost", got)
	}
}

func ptrTime(v metav1.Time) *metav1.Time { return &v }

// Two passes in one second settle the account to the same status, as the
// apiserver stores times to the second: else the second pass would write a
// change that reads back as none.
func TestAccountWithinOneSecondIsStable(t *testing.T) {
	created := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	before := kubeflowv1.JobStatus{}
	first := before.DeepCopy()
	Account(&before, first, created, created.Add(90*time.Second+100*time.Millisecond), Pass{Suspended: true})
	second := before.DeepCopy()
	Account(&before, second, created, created.Add(90*time.Second+900*time.Millisecond), Pass{Suspended: true})
	if diff := cmp.Diff(first.Goodput, second.Goodput); diff != "" {
		t.Errorf("passes 800ms apart in one second differ (-first +second):\n%s", diff)
	}
	if got := first.Goodput.AccountedTime.Time; !got.Equal(created.Add(90 * time.Second)) {
		t.Errorf("accounted at %v, want it to the second", got)
	}
}

// A report in the same second as the status's wins: the store holds the
// newest report, and a job reporting twice a second must not stall.
func TestMergeSameSecond(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	status := &kubeflowv1.Progress{Step: 10, ReportTime: at, CheckpointStep: ptrInt(5), CheckpointTime: ptrTime(at)}
	reported := &kubeflowv1.Progress{Step: 11, ReportTime: at, CheckpointStep: ptrInt(11), CheckpointTime: ptrTime(at)}
	got := Merge(status, reported)
	if got.Step != 11 || *got.CheckpointStep != 11 {
		t.Errorf("merged step %d checkpoint %d, want the report's 11 and 11", got.Step, *got.CheckpointStep)
	}
	older := &kubeflowv1.Progress{Step: 9, ReportTime: metav1.NewTime(at.Add(-time.Second))}
	if got := Merge(status, older); got.Step != 10 {
		t.Errorf("an older report won: step %d, want 10", got.Step)
	}
}

func ptrInt(v int64) *int64 { return &v }
