package tide

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// daily is samples every 5 minutes over days days before now: replicas
// high from 07:00 to 22:00 local time (shifted by early on day early.day),
// low otherwise.
func daily(loc *time.Location, now time.Time, days int, low, high int32, early map[int]time.Duration) []Sample {
	var out []Sample
	start := now.Add(-time.Duration(days) * 24 * time.Hour)
	for t := start; t.Before(now); t = t.Add(5 * time.Minute) {
		d := int(t.Sub(start) / (24 * time.Hour))
		local := t.Add(early[d]).In(loc)
		r := low
		if local.Hour() >= 7 && local.Hour() < 22 {
			r = high
		}
		out = append(out, Sample{At: t, Replicas: r})
	}
	return out
}

func TestHistoryForecastsTheSameTimeOfDayWithMargin(t *testing.T) {
	loc := berlin(t)
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, loc)
	// One day of the week came 20 minutes early: the window covers it on
	// every day.
	samples := daily(loc, now, 7, 2, 10, map[int]time.Duration{3: 20 * time.Minute})
	h, err := NewHistory(samples, now, loc, DefaultHistorySettings())
	if err != nil {
		t.Fatal(err)
	}
	at := func(hh, mm int) int32 { return h.Replicas(time.Date(2026, 12, 7, hh, mm, 0, 0, loc)) }
	if got := at(3, 0); got != 3 { // 2 + 10%, rounded up
		t.Errorf("03:00 = %d, want 3", got)
	}
	if got := at(12, 0); got != 11 {
		t.Errorf("12:00 = %d, want 11", got)
	}
	if got := at(6, 15); got != 11 { // a day 20 minutes early, within the ±30 minute window
		t.Errorf("06:15 = %d, want 11", got)
	}
	if got := at(5, 30); got != 3 {
		t.Errorf("05:30 = %d, want 3", got)
	}
	if h.Days != 7 || h.Confidence >= 1 || h.Confidence < 0.8 {
		t.Errorf("days %d confidence %.3f, want 7 days and a confidence below 1 (one day differs) but above 0.8", h.Days, h.Confidence)
	}
}

func TestHistoryTooLittle(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	_, err := NewHistory(daily(time.UTC, now, 2, 1, 4, nil), now, time.UTC, DefaultHistorySettings())
	if !errors.Is(err, ErrTooLittleHistory) {
		t.Fatalf("error %v, want ErrTooLittleHistory", err)
	}
}

func TestHistoryConfidenceFallsWithMissingDays(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	h, err := NewHistory(daily(time.UTC, now, 4, 1, 4, nil), now, time.UTC, DefaultHistorySettings())
	if err != nil {
		t.Fatal(err)
	}
	if h.Days != 4 || h.Confidence > 4.0/7+1e-9 {
		t.Errorf("days %d confidence %.3f, want 4 days and at most 4/7", h.Days, h.Confidence)
	}
}

// A time of day is the wall clock's: after the clocks go back, the
// morning rise is still at 07:00 local, an hour later in UTC.
func TestHistoryFollowsTheWallClockAcrossDaylightSaving(t *testing.T) {
	loc := berlin(t)
	now := time.Date(2026, 10, 26, 0, 0, 0, 0, loc) // the day after the change
	s := DefaultHistorySettings()
	s.Window, s.MarginPercent = 0, 0
	h, err := NewHistory(daily(loc, now, 7, 1, 6, nil), now, loc, s)
	if err != nil {
		t.Fatal(err)
	}
	steps := h.Steps(now, now.Add(24*time.Hour))
	if len(steps) != 3 || !steps[1].At.Equal(time.Date(2026, 10, 26, 6, 0, 0, 0, time.UTC)) || steps[1].Value != 6 {
		t.Errorf("steps %v, want a rise to 6 at 06:00 UTC (07:00 CET)", steps)
	}
}

// Slots are the wall clock's: with an hour's slot in a zone half an hour
// off UTC, the 07:00 rise is at 07:00 local, not at the next UTC hour.
func TestHistoryStepsOnLocalSlots(t *testing.T) {
	loc, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, loc)
	s := DefaultHistorySettings()
	s.Slot, s.Window, s.MarginPercent = time.Hour, 0, 0
	h, err := NewHistory(daily(loc, now, 7, 1, 6, nil), now, loc, s)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 12, 7, 0, 10, 0, 0, loc)
	want := []Step{{At: from, Value: 1}, {At: time.Date(2026, 12, 7, 7, 0, 0, 0, loc), Value: 6}, {At: time.Date(2026, 12, 7, 22, 0, 0, 0, loc), Value: 1}}
	if diff := cmp.Diff(want, h.Steps(from, from.Add(24*time.Hour)), sameTime); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

// Steps change exactly where the profile does, minute by minute, across
// the clocks going forward and back, in zones whole, half and three
// quarters of an hour off UTC (St. John's goes back over a 90-minute
// slot's start: the wall clock re-enters the slot before).
func TestHistoryStepsMatchTheProfileAcrossClockChanges(t *testing.T) {
	for _, zone := range []string{"Europe/Berlin", "America/St_Johns", "Asia/Kathmandu", "Australia/Lord_Howe"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		for _, slot := range []time.Duration{5 * time.Minute, time.Hour, 90 * time.Minute} {
			h := &History{loc: loc, slot: slot, profile: make([]int32, 24*time.Hour/slot)}
			for i := range h.profile {
				h.profile[i] = int32(i) // every slot differs
			}
			for _, from := range []time.Time{time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 28, 0, 0, 0, 0, time.UTC),
				time.Date(2026, 4, 4, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 3, 0, 0, 0, 0, time.UTC),
				time.Date(2026, 10, 24, 0, 7, 0, 0, time.UTC), time.Date(2026, 10, 31, 0, 0, 0, 0, time.UTC)} {
				to := from.Add(72 * time.Hour)
				want := []Step{{At: from, Value: int(h.Replicas(from))}}
				for at := from.Add(time.Minute); at.Before(to); at = at.Add(time.Minute) {
					want = append(want, Step{At: at, Value: int(h.Replicas(at))})
				}
				if diff := cmp.Diff(merged(want), h.Steps(from, to), sameTime); diff != "" {
					t.Errorf("%s, %s slots from %s (-want +got):\n%s", zone, slot, from, diff)
				}
			}
		}
	}
}
