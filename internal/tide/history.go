package tide

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Sample is a workload's replicas at a time, e.g. from Prometheus'
// kube_deployment_status_replicas.
type Sample struct {
	At       time.Time
	Replicas int32
}

// HistorySettings shape a forecast from a workload's past replicas.
type HistorySettings struct {
	// Days is how far back the history reaches.
	Days int
	// MinDays is the fewest days with samples a forecast needs.
	MinDays int
	// Slot is the resolution of the daily profile.
	Slot time.Duration
	// Window widens each time of day: the forecast at 07:00 is the highest
	// of the days between 07:00-Window and 07:00+Window, so that a morning
	// that comes a little early on some day is covered on every day.
	Window time.Duration
	// MarginPercent is added to the highest replicas, rounded up.
	MarginPercent int
	// AgreePercent: a day agrees with the forecast at a time of day when
	// its replicas are at least this share of the forecast's (before the
	// margin).
	AgreePercent int
}

// DefaultHistorySettings are a week of history, 5-minute slots, ±30
// minutes and a 10% margin.
func DefaultHistorySettings() HistorySettings {
	return HistorySettings{Days: 7, MinDays: 3, Slot: 5 * time.Minute, Window: 30 * time.Minute, MarginPercent: 10, AgreePercent: 80}
}

// ErrTooLittleHistory is wrapped by NewHistory when the samples cover
// fewer days than HistorySettings.MinDays.
var ErrTooLittleHistory = errors.New("too little history")

// History is a workload's replicas forecast from its past days: for each
// time of day, the highest over the days around that time, plus a margin.
type History struct {
	loc     *time.Location
	slot    time.Duration
	profile []int32
	// Days is how many of the days looked at had samples.
	Days int
	// Confidence is Days over the days looked at, times the share of
	// (day, time of day) pairs where the day agrees with the forecast: 1
	// for a full history that repeats every day, lower as days are missing
	// or differ.
	Confidence float64
}

// NewHistory forecasts from samples of the HistorySettings.Days days before
// now, by the time of day in loc (the workload's users' time zone).
func NewHistory(samples []Sample, now time.Time, loc *time.Location, s HistorySettings) (*History, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	if loc == nil {
		loc = time.UTC
	}
	slots := int((24 * time.Hour) / s.Slot)
	// peak[day][slot]: the day's highest replicas in the slot, -1 unseen.
	peak := make([][]int32, s.Days)
	for d := range peak {
		peak[d] = make([]int32, slots)
		for i := range peak[d] {
			peak[d][i] = -1
		}
	}
	since := now.Add(-time.Duration(s.Days) * 24 * time.Hour)
	for _, x := range samples {
		if x.At.Before(since) || !x.At.Before(now) {
			continue
		}
		d := int(x.At.Sub(since) / (24 * time.Hour))
		i := slotOf(x.At.In(loc), s.Slot)
		if x.Replicas > peak[d][i] {
			peak[d][i] = x.Replicas
		}
	}
	h := &History{loc: loc, slot: s.Slot, profile: make([]int32, slots)}
	for _, day := range peak {
		for _, v := range day {
			if v >= 0 {
				h.Days++
				break
			}
		}
	}
	if h.Days < s.MinDays {
		return nil, fmt.Errorf("%w: %d days with samples in the last %d, a forecast needs %d; state the schedule with the %s annotation meanwhile",
			ErrTooLittleHistory, h.Days, s.Days, s.MinDays, ScheduleAnnotation)
	}
	reach := int(s.Window / s.Slot)
	base := make([]int32, slots)
	for i := range slots {
		for _, day := range peak {
			for k := -reach; k <= reach; k++ {
				base[i] = max(base[i], day[(i+k+slots)%slots])
			}
		}
		h.profile[i] = int32(math.Ceil(float64(base[i]) * float64(100+s.MarginPercent) / 100))
	}
	agree, seen := 0, 0
	for _, day := range peak {
		for i, v := range day {
			if v < 0 {
				continue
			}
			seen++
			if float64(v)*100 >= float64(base[i])*float64(s.AgreePercent) {
				agree++
			}
		}
	}
	h.Confidence = float64(h.Days) / float64(s.Days) * float64(agree) / float64(seen)
	return h, nil
}

func (s HistorySettings) validate() error {
	switch {
	case s.Days < 1:
		return fmt.Errorf("history days %d: look back at least 1 day, e.g. 7", s.Days)
	case s.MinDays < 1 || s.MinDays > s.Days:
		return fmt.Errorf("history min days %d: between 1 and the days looked back (%d)", s.MinDays, s.Days)
	case s.Slot <= 0 || (24*time.Hour)%s.Slot != 0:
		return fmt.Errorf("history slot %s: must divide a day, e.g. 5m", s.Slot)
	case s.Window < 0 || s.MarginPercent < 0 || s.AgreePercent < 0 || s.AgreePercent > 100:
		return fmt.Errorf("history window %s, margin %d%%, agreement %d%%: none negative, agreement at most 100%%", s.Window, s.MarginPercent, s.AgreePercent)
	}
	return nil
}

// slotOf is the slot of a local time's time of day, by the wall clock.
func slotOf(local time.Time, slot time.Duration) int {
	h, m, sec := local.Clock()
	return int((time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second) / slot)
}

// Replicas returns the forecast replicas at t.
func (h *History) Replicas(t time.Time) int32 {
	return h.profile[slotOf(t.In(h.loc), h.slot)]
}

// Steps returns the forecast over [from, to), a step wherever the profile
// changes.
func (h *History) Steps(from, to time.Time) []Step {
	steps := []Step{{At: from, Value: int(h.Replicas(from))}}
	for t := h.nextSlot(from); t.Before(to); t = h.nextSlot(t) {
		steps = append(steps, Step{At: t, Value: int(h.Replicas(t))})
	}
	return merged(steps)
}

// nextSlot is the first start of a slot after t by the wall clock in the
// history's zone, as the profile's slots are (with an hour's slot in a zone
// half an hour off UTC, 07:00 local, not 07:30), or the zone's next change
// of offset before that: where the clocks change, the wall clock may jump
// into another slot.
func (h *History) nextSlot(t time.Time) time.Time {
	local := t.In(h.loc)
	hh, mm, ss := local.Clock()
	since := time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute + time.Duration(ss)*time.Second + time.Duration(local.Nanosecond())
	next := t.Add(h.slot - since%h.slot)
	if _, change := local.ZoneBounds(); change.After(t) && change.Before(next) {
		next = change
	}
	return next
}
