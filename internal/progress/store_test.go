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
	if n := len(s.Updates()); n != 1 {
		t.Errorf("%d wake-ups, want 1: the controller, woken by the first report and not yet come, takes the rest", n)
	}
	s.ForgetUnless(job, "")
	if _, ok := s.Progress("job"); ok || s.Len() != 0 {
		t.Error("a forgotten job still has progress")
	}
}

// TestStoreWakes: the controller is woken for a job's first report, and
// then, once it has taken the job's progress, for a checkpoint, and for a
// step unless it holds steps back; never twice before it takes them.
func TestStoreWakes(t *testing.T) {
	s := NewStore()
	job := types.NamespacedName{Namespace: "ml", Name: "mnist"}
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	step := int64(0)
	report := func(at time.Duration, checkpoint bool) int {
		t.Helper()
		step++
		if err := s.Record(job, "job", "pod", Report{Step: step, Checkpoint: checkpoint}, t0.Add(at)); err != nil {
			t.Fatal(err)
		}
		n := len(s.Updates())
		for range n {
			<-s.Updates()
		}
		return n
	}
	take := func() {
		t.Helper()
		if p, ok := s.Take("job"); !ok || p.Step != step {
			t.Fatalf("took %+v (%v), want step %d", p, ok, step)
		}
	}
	steps := []struct {
		what  string
		do    func() int
		wakes int
	}{
		{"a first report", func() int { return report(0, false) }, 1},
		{"a step before the controller came", func() int { return report(100*time.Millisecond, false) }, 0},
		{"a checkpoint before it came (its pass takes it)", func() int { return report(200*time.Millisecond, true) }, 0},
		{"a step after it took them", func() int { take(); return report(300*time.Millisecond, false) }, 1},
		{"a step while it holds steps back", func() int {
			take()
			s.HoldUntil("job", t0.Add(5*time.Second))
			return report(time.Second, false)
		}, 0},
		{"another", func() int { return report(4*time.Second, false) }, 0},
		{"a checkpoint while it holds steps back", func() int { return report(4500*time.Millisecond, true) }, 1},
		{"a step once the hold is over", func() int { take(); return report(5*time.Second, false) }, 1},
	}
	for _, st := range steps {
		if got := st.do(); got != st.wakes {
			t.Errorf("%s: %d wake-ups, want %d", st.what, got, st.wakes)
		}
	}
}

// TestStoreForgetsGoneJobs: a pass with the job its cache holds under a
// name drops the entry of any other job of that name; a report under a
// new UID replaces the entry of the earlier job of its name.
func TestStoreForgetsGoneJobs(t *testing.T) {
	s := NewStore()
	mnist := types.NamespacedName{Namespace: "ml", Name: "mnist"}
	other := types.NamespacedName{Namespace: "ml", Name: "other"}
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, r := range []struct {
		job types.NamespacedName
		uid types.UID
	}{{mnist, "mnist-1"}, {other, "other-1"}} {
		if err := s.Record(r.job, r.uid, "pod", Report{Step: 1}, t0); err != nil {
			t.Fatal(err)
		}
	}
	s.ForgetUnless(mnist, "mnist-1")
	if _, ok := s.Progress("mnist-1"); !ok {
		t.Error("a pass of the job itself dropped its progress")
	}
	s.ForgetUnless(other, "")
	if _, ok := s.Progress("other-1"); ok {
		t.Error("a job gone from the cache keeps its progress")
	}
	if err := s.Record(mnist, "mnist-2", "pod-2", Report{Step: 1}, t0); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Progress("mnist-1"); ok || s.Len() != 1 {
		t.Errorf("the earlier mnist kept its progress beside the new one (%d entries)", s.Len())
	}
	s.ForgetUnless(mnist, "mnist-3")
	if s.Len() != 0 {
		t.Errorf("%d entries, want none once the cache holds a job of the name the store never heard of", s.Len())
	}
}
