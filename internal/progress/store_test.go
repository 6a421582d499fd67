package progress

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestStore(t *testing.T) {
	s := NewStore()
	job := types.NamespacedName{Namespace: "ml", Name: "mnist"}
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if err := s.Record(job, "job", "pod-a", Report{Step: 100, Epoch: ptr.To[int64](1)}, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(job, "job", "pod-a", Report{Step: 200, Checkpoint: true}, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	var back ErrStepBackwards
	if err := s.Record(job, "job", "pod-a", Report{Step: 150}, t0.Add(2*time.Minute)); !errors.As(err, &back) {
		t.Errorf("a step back in the same pod: %v, want ErrStepBackwards", err)
	}
	// A restarted pod resumes from its checkpoint.
	if err := s.Record(job, "job", "pod-b", Report{Step: 150}, t0.Add(3*time.Minute)); err != nil {
		t.Errorf("a new pod resuming: %v", err)
	}
	p, ok := s.Progress("job")
	if !ok || p.Step != 150 || p.Epoch == nil || *p.Epoch != 1 || !p.ReportTime.Time.Equal(t0.Add(3*time.Minute)) ||
		p.CheckpointStep == nil || *p.CheckpointStep != 200 || !p.CheckpointTime.Time.Equal(t0.Add(time.Minute)) {
		t.Errorf("progress %+v (%v)", p, ok)
	}
	if n := len(s.Updates()); n != 3 {
		t.Errorf("%d wake-ups, want one per accepted report (3)", n)
	}
	s.Forget("job")
	if _, ok := s.Progress("job"); ok {
		t.Error("a forgotten job still has progress")
	}
}
