package tfjob

import (
	"testing"

	"github.com/backfill-dev/backfill/internal/colocation"
)

// A job the GPU loans paused says so in its Suspended condition, with
// when its next loan comes; any other suspension is plain.
func TestSuspendedBecause(t *testing.T) {
	job := makeJob("j").replicas(Worker, 1, Never).suspend(true).obj()
	if reason, message := suspendedBecause(job); reason != reasonSuspended || message != "TFJob ns/j is suspended." {
		t.Errorf("A suspended job: %s %q", reason, message)
	}
	job.Annotations = map[string]string{colocation.GPULoanPausedAnnotation: "returned 4 GPUs of pool A100 to online work at 2026-12-07 07:25 UTC, next loan from ~2026-12-07 22:10 UTC"}
	reason, message := suspendedBecause(job)
	want := "TFJob ns/j is paused: it returned 4 GPUs of pool A100 to online work at 2026-12-07 07:25 UTC, next loan from ~2026-12-07 22:10 UTC."
	if reason != colocation.ReasonGPUsReturnedToOnline || message != want {
		t.Errorf("A paused job: %s %q, want %s %q", reason, message, colocation.ReasonGPUsReturnedToOnline, want)
	}
}
