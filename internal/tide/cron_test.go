package tide

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func mustSchedule(t *testing.T, floor int32, triggers ...CronTrigger) *CronSchedule {
	t.Helper()
	s, err := NewCronSchedule(triggers, floor)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCronReplicasInsideAndOutsideWindows(t *testing.T) {
	loc := berlin(t)
	s := mustSchedule(t, 2,
		CronTrigger{Timezone: "Europe/Berlin", Start: "0 7 * * *", End: "0 22 * * *", DesiredReplicas: 8},
		CronTrigger{Timezone: "Europe/Berlin", Start: "0 9 * * 1-5", End: "0 18 * * 1-5", DesiredReplicas: 12},
		CronTrigger{Timezone: "Europe/Berlin", Start: "0 10 * * *", End: "0 11 * * *", DesiredReplicas: 4},
	)
	day := func(d, h, m int) time.Time { return time.Date(2026, 12, d, h, m, 0, 0, loc) } // 7 December 2026 is a Monday
	tests := map[string]struct {
		at   time.Time
		want int32
	}{
		"night: the floor":                   {day(7, 3, 0), 2},
		"the start itself is inside":         {day(7, 7, 0), 8},
		"a second before the start":          {day(7, 6, 59).Add(59 * time.Second), 2},
		"two windows: the highest":           {day(7, 10, 30), 12},
		"the end itself is outside":          {day(7, 22, 0), 2},
		"weekend: the weekday window is off": {day(12, 10, 30), 8},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := s.Replicas(tc.at); got != tc.want {
				t.Errorf("Replicas(%s) = %d, want %d", tc.at, got, tc.want)
			}
		})
	}
}

// The window is read in the trigger's time zone: 07:00 in Berlin is 05:00
// UTC in summer time and 06:00 UTC after the clocks go back.
func TestCronStepsFollowDaylightSaving(t *testing.T) {
	s := mustSchedule(t, 1, CronTrigger{Timezone: "Europe/Berlin", Start: "0 7 * * *", End: "0 22 * * *", DesiredReplicas: 5})
	from := time.Date(2026, 10, 24, 0, 0, 0, 0, time.UTC)
	got := s.Steps(from, from.Add(48*time.Hour))
	want := []Step{
		{At: from, Value: 1},
		{At: time.Date(2026, 10, 24, 5, 0, 0, 0, time.UTC), Value: 5}, // CEST, UTC+2
		{At: time.Date(2026, 10, 24, 20, 0, 0, 0, time.UTC), Value: 1},
		{At: time.Date(2026, 10, 25, 6, 0, 0, 0, time.UTC), Value: 5}, // CET, UTC+1 from 25 October
		{At: time.Date(2026, 10, 25, 21, 0, 0, 0, time.UTC), Value: 1},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("Steps (-want +got):\n%s", diff)
	}
}

func TestCronWindowAcrossMidnight(t *testing.T) {
	s := mustSchedule(t, 0, CronTrigger{Timezone: "UTC", Start: "0 22 * * *", End: "0 6 * * *", DesiredReplicas: 3})
	if got := s.Replicas(time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC)); got != 3 {
		t.Errorf("at 23:00 = %d, want 3", got)
	}
	if got := s.Replicas(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)); got != 0 {
		t.Errorf("at 12:00 = %d, want 0", got)
	}
}

func TestCronValidation(t *testing.T) {
	ok := CronTrigger{Timezone: "UTC", Start: "0 7 * * *", End: "0 22 * * *", DesiredReplicas: 2}
	tests := map[string]struct {
		triggers []CronTrigger
		floor    int32
		want     []string
	}{
		"four fields": {[]CronTrigger{ok, {Timezone: "UTC", Start: "0 7 * *", End: "0 22 * * *", DesiredReplicas: 2}}, 0,
			[]string{`trigger 2: start "0 7 * *"`, "expected exactly 5 fields", `e.g. "0 7 * * *"`}},
		"six fields":       {[]CronTrigger{{Timezone: "UTC", Start: "0 7 * * *", End: "0 0 22 * * *"}}, 0, []string{`trigger 1: end "0 0 22 * * *"`, "expected exactly 5 fields"}},
		"bad hour":         {[]CronTrigger{{Timezone: "UTC", Start: "0 25 * * *", End: "0 22 * * *"}}, 0, []string{`start "0 25 * * *"`, "above maximum"}},
		"unknown zone":     {[]CronTrigger{{Timezone: "Mars/Olympus", Start: "0 7 * * *", End: "0 22 * * *"}}, 0, []string{`timezone "Mars/Olympus"`, "IANA"}},
		"no zone":          {[]CronTrigger{{Start: "0 7 * * *", End: "0 22 * * *"}}, 0, []string{"timezone is empty"}},
		"start is end":     {[]CronTrigger{{Timezone: "UTC", Start: "0 7 * * *", End: "0  7 * * *"}}, 0, []string{"start and end are both"}},
		"negative desired": {[]CronTrigger{{Timezone: "UTC", Start: "0 7 * * *", End: "0 8 * * *", DesiredReplicas: -1}}, 0, []string{"desiredReplicas -1"}},
		"negative floor":   {[]CronTrigger{ok}, -1, []string{"outside the schedule: -1"}},
		"none":             {nil, 0, []string{"no cron trigger"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := NewCronSchedule(tc.triggers, tc.floor)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
