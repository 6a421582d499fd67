package tide

import (
	"errors"
	"testing"
	"time"
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
