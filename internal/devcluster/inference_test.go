package devcluster

import (
	"strings"
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/tide"
)

// The inference's KEDA cron windows, read as KEDA and the manager read
// them, hold the day's replicas from the morning to the evening of every
// compressed day, and the night's outside, for days that do not divide an
// hour too; the day's start may be any whole minute.
func TestCronWindowsFollowTheCompressedDay(t *testing.T) {
	for _, day := range []time.Duration{2 * time.Minute, 6 * time.Minute, 24 * time.Minute, 48 * time.Minute, 90 * time.Minute, 24 * time.Hour} {
		for _, start := range []time.Time{
			time.Date(2026, 12, 7, 11, 37, 0, 0, time.UTC),
			time.Date(2026, 12, 7, 23, 59, 0, 0, time.FixedZone("CET", 3600)),
		} {
			c := clock{start: start, dayLength: day}
			triggers, err := c.cronWindows(inferenceMorning, inferenceEvening, 8)
			if err != nil {
				t.Fatalf("day %v from %v: %v", day, start, err)
			}
			sched, err := tide.NewCronSchedule(triggers, inferenceNightReplicas)
			if err != nil {
				t.Fatalf("day %v: the manager refuses the triggers %+v: %v", day, triggers, err)
			}
			minutes := int(day / time.Minute)
			from := int(inferenceMorning/24*float64(minutes) + 0.5)
			to := int(inferenceEvening/24*float64(minutes) + 0.5)
			// Three real days, every minute: the schedule repeats across
			// real midnights.
			for m := range 3 * 24 * 60 {
				at := start.Add(time.Duration(m) * time.Minute)
				into := m % minutes
				want := int32(inferenceNightReplicas)
				if into >= from && into < to {
					want = 8
				}
				if got := sched.Replicas(at); got != want {
					t.Fatalf("day %v from %v: at %v (%s) %d replicas, want %d; triggers %+v", day, start, at, c.at(at), got, want, triggers)
				}
			}
		}
	}
}

// Days that no cron can repeat are refused, saying what would do.
func TestCronWindowsRefuseDaysCronCannotRepeat(t *testing.T) {
	for _, day := range []time.Duration{7 * time.Minute, 150 * time.Second, 25 * time.Hour} {
		opts := DefaultOptions()
		opts.DayLength = day
		err := opts.Validate()
		if err == nil || !strings.Contains(err.Error(), "divides 24h") {
			t.Errorf("--day=%v: %v, want a refusal naming days that divide 24h", day, err)
		}
		opts.GPUNodes = 0
		if err := opts.Validate(); err != nil {
			t.Errorf("--day=%v --gpu-nodes=0: %v, want no GPU inference and no refusal", day, err)
		}
	}
	c := clock{start: time.Date(2026, 12, 7, 11, 37, 30, 0, time.UTC), dayLength: 24 * time.Minute}
	if _, err := c.cronWindows(inferenceMorning, inferenceEvening, 8); err == nil {
		t.Error("A day starting within a minute: no error, want one")
	}
}

// The night leaves the GPU backlog half each of what loans may lend: the
// default cluster's 16 GPUs less the night's inference pod of 2 and the
// tenth held back before the morning.
func TestGPUBacklogFitsTheNight(t *testing.T) {
	opts := DefaultOptions()
	if got, want := opts.inferenceDayReplicas(), int32(8); got != want {
		t.Errorf("Day replicas %d, want %d: every GPU", got, want)
	}
	if got, want := opts.gpuBacklogWorkers(), int32(6); got != want {
		t.Errorf("GPU backlog workers %d, want %d", got, want)
	}
	for _, h := range []float64{21, 23.5, 0, 4.9} {
		if !gpuBacklogSubmits(h) {
			t.Errorf("No GPU backlog submitted at %.1f h, in the night", h)
		}
	}
	for _, h := range []float64{5, 6.9, 7, 12, 20.9} {
		if gpuBacklogSubmits(h) {
			t.Errorf("GPU backlog submitted at %.1f h: its notice would come short", h)
		}
	}
}
