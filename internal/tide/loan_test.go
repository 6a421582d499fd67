package tide

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// pool of 16 GPUs whose online need is steps, over a day from now.
func pool(now time.Time, steps []Step, loans ...Loan) Pool {
	return Pool{GPUs: 16, Demand: Demand{Steps: clip(steps, now, now.Add(24*time.Hour)), From: now, To: now.Add(24 * time.Hour)}, Loans: loans}
}

// noLead are settings without the early lead, so times read plainly.
func noLead() Settings {
	s := DefaultSettings()
	s.Lead = 0
	return s
}

func TestLendableUntilTheNeedRises(t *testing.T) {
	now := at(1, 0)
	p := pool(now, []Step{{At: at(0, 0), Value: 4}, {At: at(7, 0), Value: 10}, {At: at(8, 0), Value: 16}},
		Loan{Job: "a/old", GPUs: 2, Started: at(0, 0)})
	got := Lendable(now, p, DefaultSettings())
	// 16 - 4 online - 2 lent = 10, until the need reaches 16 - 2 - 10 + 1 = 5 at 07:00 less the 30-minute lead.
	if got.GPUs != 10 || !got.Until.Equal(at(6, 30)) {
		t.Errorf("Lendable = %d until %s, want 10 until 06:30", got.GPUs, got.Until)
	}
	p.OnlineInUse = 9 // a spike now
	if got := Lendable(now, p, DefaultSettings()); got.GPUs != 5 {
		t.Errorf("with online holding 9: %d, want 5", got.GPUs)
	}
}

func TestAdmitOnlyLoansThatReachACheckpoint(t *testing.T) {
	p := pool(at(5, 0), []Step{{At: at(0, 0), Value: 4}, {At: at(7, 0), Value: 16}})
	s := noLead()
	tests := map[string]struct {
		now  time.Time
		req  Request
		want bool
	}{
		"2 h left, 30 min interval, 5 min checkpoint":                     {at(5, 0), Request{GPUs: 4, CheckpointInterval: 30 * time.Minute, CheckpointTime: 5 * time.Minute}, true},
		"40 min left, 30 min interval, 5 min checkpoint (8.5 min notice)": {at(6, 20), Request{GPUs: 4, CheckpointInterval: 30 * time.Minute, CheckpointTime: 5 * time.Minute}, true},
		"35 min left: short of 30 + 8.5 min":                              {at(6, 25), Request{GPUs: 4, CheckpointInterval: 30 * time.Minute, CheckpointTime: 5 * time.Minute}, false},
		"unmeasured checkpoint: the 10-minute default (16 min notice)":    {at(6, 20), Request{GPUs: 4, CheckpointInterval: 30 * time.Minute}, false},
		"no interval: the minimum loan":                                   {at(6, 25), Request{GPUs: 4, CheckpointTime: 5 * time.Minute}, true},
		"more GPUs than free":                                             {at(5, 0), Request{GPUs: 13, CheckpointTime: time.Minute}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := p
			p.Demand.From = tc.now
			got := Admit(tc.now, p, s, tc.req)
			if got.OK != tc.want {
				t.Errorf("Admit = %v (%s), want %v", got.OK, got.Reason, tc.want)
			}
			if got.OK && !got.Until.Equal(at(7, 0)) {
				t.Errorf("until %s, want 07:00", got.Until)
			}
		})
	}
	if got := Admit(at(5, 0), p, s, Request{GPUs: 20}); !strings.Contains(got.Reason, "asks 20 GPUs, 12 free") {
		t.Errorf("reason %q does not say how many are free", got.Reason)
	}
}

// A morning that brings back 2 of 8 GPUs an hour stops only what each
// step needs, and of equal sizes the loan with the least work at risk.
func TestReturnsFollowTheForecastInSteps(t *testing.T) {
	now := at(4, 0)
	s := noLead()
	steps := []Step{{At: at(0, 0), Value: 6}, {At: at(6, 0), Value: 8}, {At: at(7, 0), Value: 10}, {At: at(8, 0), Value: 12}, {At: at(9, 0), Value: 16}}
	loans := []Loan{
		{Job: "t/a", GPUs: 2, Started: at(0, 0), LastCheckpoint: at(3, 55), CheckpointTime: 2 * time.Minute},      // little at risk
		{Job: "t/b", GPUs: 2, Started: at(0, 0), LastCheckpoint: at(1, 0), CheckpointTime: 2 * time.Minute},       // much at risk
		{Job: "t/c", GPUs: 4, Started: at(0, 0), LastCheckpoint: at(3, 59), CheckpointTime: 4 * time.Minute},      // least per job, but 4 GPUs
		{Job: "t/d", GPUs: 2, Started: at(0, 0), CheckpointInterval: time.Hour, CheckpointTime: 10 * time.Minute}, // checkpoints on the hour
	}
	got := Returns(now, pool(now, steps, loans...), s)
	// 06:00 needs 2: t/d, which checkpoints on the hour, risks the least
	// at its 05:44 notice. 07:00 needs 2: t/a. 08:00 needs 2: t/b, as t/c
	// is 4. 09:00 needs 2 more: only t/c is left.
	want := []Return{
		{Job: "t/d", GPUs: 2, Notice: at(5, 44), Deadline: at(6, 0)},
		{Job: "t/a", GPUs: 2, Notice: at(6, 56), Deadline: at(7, 0)},
		{Job: "t/b", GPUs: 2, Notice: at(7, 56), Deadline: at(8, 0)},
		{Job: "t/c", GPUs: 4, Notice: at(8, 53), Deadline: at(9, 0)},
	}
	if diff := cmp.Diff(want, got, sameTime, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".NextLoan" }, cmp.Ignore())); diff != "" {
		t.Errorf("returns (-want +got):\n%s", diff)
	}
}

func TestReturnsPreferFewestGPUs(t *testing.T) {
	now := at(4, 0)
	steps := []Step{{At: at(0, 0), Value: 5}, {At: at(6, 0), Value: 9}}
	loans := []Loan{
		{Job: "t/big", GPUs: 8, Started: at(3, 59)},
		{Job: "t/two", GPUs: 2, Started: at(0, 0)},
		{Job: "t/one", GPUs: 1, Started: at(0, 0)},
	}
	// 06:00 needs 9 + 11 - 16 = 4 back: t/two and t/one (3) are short,
	// t/big (8) covers it.
	got := Returns(now, pool(now, steps, loans...), noLead())
	if len(got) != 1 || got[0].Job != "t/big" {
		t.Errorf("returns %+v, want t/big alone", got)
	}
}

func TestReturnsKeepANoticedDeadlineAndMarkLateOnes(t *testing.T) {
	now := at(6, 58)
	steps := []Step{{At: at(0, 0), Value: 8}, {At: at(7, 0), Value: 12}}
	loans := []Loan{
		{Job: "t/noticed", GPUs: 4, Started: at(0, 0), Deadline: at(7, 0), CheckpointTime: 5 * time.Minute},
		{Job: "t/late", GPUs: 4, Started: at(0, 0), CheckpointTime: 5 * time.Minute},
	}
	p := pool(now, steps, loans...)
	p.OnlineInUse = 12 // a spike: online wants 12 now
	got := Returns(now, p, noLead())
	want := []Return{
		{Job: "t/late", GPUs: 4, Notice: now, Deadline: now, Short: true},
		{Job: "t/noticed", GPUs: 4, Notice: now, Deadline: at(7, 0), Short: true},
	}
	if diff := cmp.Diff(want, got, sameTime, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".NextLoan" }, cmp.Ignore())); diff != "" {
		t.Errorf("returns (-want +got):\n%s", diff)
	}
}

func TestNextLoanAfterTheDay(t *testing.T) {
	now := at(5, 0)
	steps := []Step{{At: at(0, 0), Value: 4}, {At: at(7, 25), Value: 16}, {At: at(22, 10), Value: 4}}
	p := pool(now, steps, Loan{Job: "t/a", GPUs: 8, Started: at(0, 0), CheckpointTime: 3 * time.Minute})
	got := Returns(now, p, DefaultSettings())
	if len(got) != 1 || !got[0].Deadline.Equal(at(6, 55)) || !got[0].NextLoan.Equal(at(22, 10)) {
		t.Fatalf("returns %+v, want t/a back at 06:55 (07:25 less the lead), next loan from 22:10", got)
	}
	if next := NextLoan(now, at(8, 0), pool(now, steps), DefaultSettings(), 8); !next.Equal(at(22, 10)) {
		t.Errorf("NextLoan = %s, want 22:10", next)
	}
	if next := NextLoan(now, at(8, 0), pool(now, steps), DefaultSettings(), 13); !next.IsZero() {
		t.Errorf("NextLoan of 13 GPUs = %s, want none (12 free at most)", next)
	}
}
