package gpuloan

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The loan annotation reads back what was written, and a paused job says
// when its next loan comes.
func TestLoanState(t *testing.T) {
	s := LoanState{Phase: PhasePaused, Pool: "A100", GPUs: 4, ReturnedAt: t0, NextLoan: t0.Add(15 * time.Hour), CheckpointSeconds: 90}
	got, ok, err := ReadLoanState(map[string]string{LoanAnnotation: s.annotation()})
	if err != nil || !ok {
		t.Fatalf("ReadLoanState: ok %v, %v", ok, err)
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("Round trip (-want +got):\n%s", diff)
	}
	if got.checkpointTime() != 90*time.Second {
		t.Errorf("checkpointTime = %v, want 90s", got.checkpointTime())
	}
	if msg, want := s.PausedMessage(), "returned 4 GPUs of pool A100 to online work at 2026-12-07 01:00 UTC, next loan from ~2026-12-07 16:00 UTC"; msg != want {
		t.Errorf("PausedMessage = %q, want %q", msg, want)
	}
	s.NextLoan = time.Time{}
	if msg := s.PausedMessage(); !strings.Contains(msg, "no loan in sight") {
		t.Errorf("PausedMessage without a next loan = %q", msg)
	}
	if _, ok, err := ReadLoanState(map[string]string{LoanAnnotation: "{"}); !ok || err == nil {
		t.Errorf("A broken annotation: ok %v, err %v; want ok and an error", ok, err)
	}
	if _, ok, _ := ReadLoanState(nil); ok {
		t.Error("No annotation reads as one")
	}
}

// A returning job stops at its deadline, or earlier on a checkpoint
// reported after its notice.
func TestDue(t *testing.T) {
	s := LoanState{Phase: PhaseReturning, NoticeAt: t0, Deadline: t0.Add(10 * time.Minute)}
	cases := map[string]struct {
		checkpoint time.Time
		now        time.Time
		want       bool
	}{
		"before the deadline, no checkpoint":        {now: t0.Add(5 * time.Minute)},
		"before the deadline, checkpoint before it": {checkpoint: t0.Add(-time.Minute), now: t0.Add(5 * time.Minute)},
		"the handshake": {checkpoint: t0.Add(3 * time.Minute), now: t0.Add(4 * time.Minute), want: true},
		"the deadline":  {now: t0.Add(10 * time.Minute), want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := jobWithCheckpoint(tc.checkpoint)
			if got := due(job, s, tc.now); got != tc.want {
				t.Errorf("due = %v, want %v", got, tc.want)
			}
		})
	}
}

// A job paused early by its handshake waits for its return's deadline
// before it may borrow again: the gap before it is online's.
func TestReturnPassed(t *testing.T) {
	s := LoanState{Phase: PhasePaused, NoticeAt: t0, Deadline: t0.Add(10 * time.Minute), ReturnedAt: t0.Add(4 * time.Minute)}
	for now, want := range map[time.Time]bool{
		t0.Add(4 * time.Minute):  false,
		t0.Add(9 * time.Minute):  false,
		t0.Add(10 * time.Minute): true,
		t0.Add(11 * time.Minute): true,
	} {
		if got := returnPassed(s, now); got != want {
			t.Errorf("at %v: returnPassed = %v, want %v", now.Sub(t0), got, want)
		}
	}
}

// The settings' errors name the flag to fix.
func TestSettingsValidate(t *testing.T) {
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatalf("The defaults: %v", err)
	}
	cases := map[string]struct {
		mutate func(*Settings)
		want   string
	}{
		"interval":   {func(s *Settings) { s.Interval = 0 }, "--gpu-loan-interval=0s"},
		"checkpoint": {func(s *Settings) { s.Tide.DefaultCheckpointTime = 0 }, "--gpu-loan-checkpoint-time=0s"},
		"warm-up":    {func(s *Settings) { s.DefaultWarmUp = -time.Second }, "--gpu-loan-warm-up=-1s"},
		"lead":       {func(s *Settings) { s.Tide.Lead = -time.Second }, "--gpu-loan-lead=-1s"},
		"min loan":   {func(s *Settings) { s.Tide.MinLoan = -time.Second }, "--gpu-loan-min-loan=-1s"},
		"horizon":    {func(s *Settings) { s.Horizon = time.Hour }, "horizon"},
		"tide":       {func(s *Settings) { s.Tide.CheckpointMarginPercent = -1 }, "margin"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := DefaultSettings()
			tc.mutate(&s)
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
