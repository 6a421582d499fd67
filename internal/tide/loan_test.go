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

// noLead are settings without the early lead and the headroom, so times
// read plainly.
func noLead() Settings {
	s := DefaultSettings()
	s.Lead, s.RiseHeadroomPercent = 0, 0
	return s
}

func TestLendableUntilTheNeedRises(t *testing.T) {
	now := at(1, 0)
	p := pool(now, []Step{{At: at(0, 0), Value: 4}, {At: at(7, 0), Value: 10}, {At: at(8, 0), Value: 16}},
		Loan{Job: "a/old", GPUs: 2, Started: at(0, 0)})
	got := Lendable(now, p, DefaultSettings())
	// 16 - 4 online - 2 lent = 10 free. They stay free while the need is
	// at most 16 - 2 lent - 10 = 4: it rises to 10 at 07:00, taken 30
	// minutes early (the lead), so until 06:30.
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

// A loan that outlasts the forecast ends, as far as is known, beyond it:
// the reason does not give the forecast's end as its end.
func TestAdmitBeyondTheForecast(t *testing.T) {
	now := at(5, 0)
	p := pool(now, []Step{{At: at(0, 0), Value: 4}})
	got := Admit(now, p, noLead(), Request{GPUs: 4, CheckpointTime: time.Minute})
	if !got.OK || !got.Until.Equal(p.Demand.To) || !strings.Contains(got.Reason, "beyond the forecast (until at least") {
		t.Errorf("Admit = %v until %s (%s), want a loan beyond the forecast, until at least %s", got.OK, got.Until, got.Reason, p.Demand.To)
	}
}

func TestSettingsRefuseHeadroomOverThePool(t *testing.T) {
	s := DefaultSettings()
	s.RiseHeadroomPercent = 101
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "at most 100%") {
		t.Errorf("headroom 101%%: error %v, want one saying at most 100%%", err)
	}
	s.RiseHeadroomPercent = 100
	if err := s.Validate(); err != nil {
		t.Errorf("headroom 100%%: %v", err)
	}
}

// A morning that brings back 2 of 8 GPUs an hour stops only what each
// step needs: of equal GPUs the cheapest checkpoint, of equal checkpoints
// the least work at risk.
func TestReturnsFollowTheForecastInSteps(t *testing.T) {
	now := at(4, 0)
	s := noLead()
	steps := []Step{{At: at(0, 0), Value: 6}, {At: at(6, 0), Value: 8}, {At: at(7, 0), Value: 10}, {At: at(8, 0), Value: 12}, {At: at(9, 0), Value: 16}}
	loans := []Loan{
		{Job: "t/a", GPUs: 2, Started: at(0, 0), LastCheckpoint: at(3, 55), CheckpointTime: 2 * time.Minute},      // little at risk
		{Job: "t/b", GPUs: 2, Started: at(0, 0), LastCheckpoint: at(1, 0), CheckpointTime: 2 * time.Minute},       // much at risk
		{Job: "t/c", GPUs: 4, Started: at(0, 0), LastCheckpoint: at(3, 59), CheckpointTime: 4 * time.Minute},      // 4 GPUs
		{Job: "t/d", GPUs: 2, Started: at(0, 0), CheckpointInterval: time.Hour, CheckpointTime: 10 * time.Minute}, // a long checkpoint
	}
	got := Returns(now, pool(now, steps, loans...), s)
	// Notices: 2 min x 150% + 1 min = 4 min for t/a and t/b, 7 for t/c, 16
	// for t/d. 06:00 needs 2: t/a (as cheap as t/b, less at risk); 07:00:
	// t/b; 08:00: t/d, as t/c is 4; 09:00 needs 4: t/c.
	want := []Return{
		{Job: "t/a", GPUs: 2, Notice: at(5, 56), Deadline: at(6, 0)},
		{Job: "t/b", GPUs: 2, Notice: at(6, 56), Deadline: at(7, 0)},
		{Job: "t/d", GPUs: 2, Notice: at(7, 44), Deadline: at(8, 0)},
		{Job: "t/c", GPUs: 4, Notice: at(8, 53), Deadline: at(9, 0)},
	}
	if diff := cmp.Diff(want, got, sameTime, ignoreNextLoan); diff != "" {
		t.Errorf("returns (-want +got):\n%s", diff)
	}
}

var ignoreNextLoan = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".NextLoan" }, cmp.Ignore())

// The loans stopped for one step are told together, at the earliest of
// their notices, so that the choice is never told half.
func TestReturnsTellAStepsLoansTogether(t *testing.T) {
	now := at(4, 0)
	steps := []Step{{At: at(0, 0), Value: 8}, {At: at(6, 0), Value: 12}}
	loans := []Loan{
		{Job: "t/quick", GPUs: 2, Started: at(0, 0), CheckpointTime: 2 * time.Minute},
		{Job: "t/slow", GPUs: 2, Started: at(0, 0), CheckpointTime: 10 * time.Minute},
		{Job: "t/big", GPUs: 4, Started: at(0, 0), CheckpointTime: 30 * time.Minute},
	}
	got := Returns(now, pool(now, steps, loans...), noLead())
	want := []Return{
		{Job: "t/quick", GPUs: 2, Notice: at(5, 44), Deadline: at(6, 0)},
		{Job: "t/slow", GPUs: 2, Notice: at(5, 44), Deadline: at(6, 0)},
	}
	if diff := cmp.Diff(want, got, sameTime, ignoreNextLoan); diff != "" {
		t.Errorf("returns (-want +got):\n%s", diff)
	}
}

// A loan whose notice is past cannot finish its checkpoint: another loan
// is stopped instead, even of more GPUs.
func TestReturnsAvoidLoansTooLateToCheckpoint(t *testing.T) {
	now := at(5, 50)
	steps := []Step{{At: at(0, 0), Value: 10}, {At: at(6, 0), Value: 12}}
	loans := []Loan{
		{Job: "t/slow", GPUs: 2, Started: at(0, 0), CheckpointTime: 10 * time.Minute}, // notice at 05:44
		{Job: "t/fast", GPUs: 4, Started: at(0, 0), CheckpointTime: time.Minute},      // notice at 05:57:30
	}
	got := Returns(now, pool(now, steps, loans...), noLead())
	if len(got) != 1 || got[0].Job != "t/fast" || got[0].Short {
		t.Errorf("returns %+v, want t/fast in time", got)
	}
}

// Online above its forecast now is taken to last: the next rise needs
// its GPUs on top.
func TestReturnsHoldASpikeOverTheForecast(t *testing.T) {
	now := at(1, 0)
	steps := []Step{{At: at(0, 0), Value: 4}, {At: at(7, 0), Value: 10}}
	p := pool(now, steps, Loan{Job: "t/a", GPUs: 6, Started: at(0, 0), CheckpointTime: time.Minute})
	s := DefaultSettings()
	s.RiseHeadroomPercent = 0
	if got := Returns(now, p, s); len(got) != 0 {
		t.Fatalf("returns %+v with online as forecast, want none", got)
	}
	p.OnlineInUse = 8
	got := Returns(now, p, s)
	if len(got) != 1 || !got[0].Deadline.Equal(at(6, 30)) {
		t.Errorf("returns %+v with a spike of 4, want t/a back by 06:30", got)
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
	// A spike: online wants 14 now. t/noticed is on its way out and is
	// not stopped twice; the 2 GPUs beyond it come from t/late at once.
	p.OnlineInUse = 14
	got := Returns(now, p, noLead())
	want := []Return{
		{Job: "t/late", GPUs: 4, Notice: now, Deadline: now, Short: true},
		{Job: "t/noticed", GPUs: 4, Notice: now, Deadline: at(7, 0), Short: true},
	}
	if diff := cmp.Diff(want, got, sameTime, ignoreNextLoan); diff != "" {
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

// A loan the morning ends frees its GPUs for the evening even before it is
// told: a job paused first does not see it held for ever.
func TestNextLoanCountsLoansOnlyUntilTheirReturn(t *testing.T) {
	now := at(5, 0)
	steps := []Step{{At: at(0, 0), Value: 2}, {At: at(7, 25), Value: 16}, {At: at(22, 10), Value: 2}}
	p := pool(now, steps, Loan{Job: "t/untold", GPUs: 4, Started: at(0, 0), CheckpointTime: 3 * time.Minute})
	p.GPUs = 12 // 4 held outside the loans, by Kueue's jobs
	if next := NextLoan(now, now, p, DefaultSettings(), 8); !next.Equal(at(22, 10)) {
		t.Errorf("NextLoan = %s, want 22:10: t/untold is back at 06:55", next)
	}
	if len(p.Loans) != 1 || !p.Loans[0].Deadline.IsZero() {
		t.Errorf("NextLoan changed the pool's loans: %+v", p.Loans)
	}
}

// A rise is expected with room for a spike on top, from the lead before it
// until its time; after it the room is lent again.
func TestLendableHoldsHeadroomWithARise(t *testing.T) {
	now := at(6, 0)
	steps := []Step{{At: at(0, 0), Value: 4}, {At: at(7, 0), Value: 10}}
	s := DefaultSettings()
	s.RiseHeadroomPercent = 25 // 4 of 16 GPUs
	if got := Lendable(at(6, 40), pool(at(6, 40), steps), s); got.GPUs != 16-10-4 {
		t.Errorf("20 minutes before the rise: %d GPUs lendable, want %d", got.GPUs, 16-10-4)
	}
	if got := Lendable(at(7, 0), pool(at(7, 0), steps), s); got.GPUs != 16-10 {
		t.Errorf("at the rise: %d GPUs lendable, want %d", got.GPUs, 16-10)
	}
	if got := Lendable(now, pool(now, steps), s); got.GPUs != 16-4 || !got.Until.Equal(at(6, 30)) {
		t.Errorf("an hour before: %d until %s, want 12 until 06:30", got.GPUs, got.Until)
	}
}

// A loan told to return holds its GPUs until its deadline: a rise before
// that deadline stops another loan, as Lendable counts it too.
func TestReturnsCountAToldLoanUntilItsDeadline(t *testing.T) {
	now := at(4, 0)
	steps := []Step{{At: at(0, 0), Value: 4}, {At: at(6, 0), Value: 8}, {At: at(8, 0), Value: 16}}
	loans := []Loan{
		{Job: "t/a", GPUs: 4, Started: at(0, 0), Deadline: at(8, 0), CheckpointTime: 5 * time.Minute},
		{Job: "t/b", GPUs: 4, Started: at(0, 0), CheckpointTime: 5 * time.Minute},
		{Job: "t/c", GPUs: 4, Started: at(0, 0), CheckpointTime: 5 * time.Minute},
	}
	p := pool(now, steps, loans...)
	if got := Lendable(now, p, noLead()); got.GPUs != 0 {
		t.Errorf("Lendable = %d, want 0 (16 - 4 online - 12 lent)", got.GPUs)
	}
	// 06:00 needs 8 + 12 - 16 = 4 back: t/b (as cheap as t/c, named
	// first); 08:00 the rest. Notices: 5 min x 150% + 1 min = 8.5 min.
	got := Returns(now, p, noLead())
	want := []Return{
		{Job: "t/b", GPUs: 4, Notice: at(6, 0).Add(-8*time.Minute - 30*time.Second), Deadline: at(6, 0)},
		{Job: "t/a", GPUs: 4, Notice: at(8, 0).Add(-8*time.Minute - 30*time.Second), Deadline: at(8, 0)},
		{Job: "t/c", GPUs: 4, Notice: at(8, 0).Add(-8*time.Minute - 30*time.Second), Deadline: at(8, 0)},
	}
	if diff := cmp.Diff(want, got, sameTime, ignoreNextLoan); diff != "" {
		t.Errorf("returns (-want +got):\n%s", diff)
	}
}

// Online pods that wait now (a spike) while a told loan is on its way
// out stop no other loan at once: the scheduler's preemption serves them,
// and the told loan frees its GPUs by its deadline.
func TestReturnsStopNoSecondLoanForASpikeNow(t *testing.T) {
	now := at(4, 0)
	loans := []Loan{
		{Job: "t/a", GPUs: 4, Started: at(0, 0), Deadline: at(4, 20), CheckpointTime: 5 * time.Minute},
		{Job: "t/b", GPUs: 4, Started: at(0, 0), CheckpointTime: 5 * time.Minute},
		{Job: "t/c", GPUs: 4, Started: at(0, 0), CheckpointTime: 5 * time.Minute},
	}
	p := pool(now, []Step{{At: at(0, 0), Value: 4}}, loans...)
	p.OnlineInUse = 8 // 4 over the forecast, waiting for t/a's GPUs
	got := Returns(now, p, noLead())
	if len(got) != 1 || got[0].Job != "t/a" {
		t.Errorf("returns %+v, want t/a alone", got)
	}
}
