package tide

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ScheduleAnnotation on a Deployment or StatefulSet states its schedule,
// or overrides the one its KEDA ScaledObject or its history gives:
//
//	backfill.dev/gpu-schedule: "Europe/Berlin 0 7 * * 1-5 - 0 22 * * 1-5 = 8; UTC 0 9 * * 6,0 - 0 18 * * 6,0 = 4"
//
// Windows are separated by ";". Each is a time zone (IANA), a start (5
// cron fields), a lone "-", an end (5 cron fields), a lone "=" and the
// replicas inside the window: a KEDA cron trigger written on one line.
// Outside every window the workload runs its minimum replicas.
const ScheduleAnnotation = "backfill.dev/gpu-schedule"

// WarmUpAnnotation states a workload's warm-up, from pod creation to
// Ready, as a Go duration ("90s", "3m"); it moves the workload's need for
// GPUs that much earlier.
const WarmUpAnnotation = "backfill.dev/gpu-warm-up"

// annotationExample is a valid window, for error messages.
const annotationExample = `"Europe/Berlin 0 7 * * * - 0 22 * * * = 8"`

// ParseScheduleAnnotation reads the value of ScheduleAnnotation into cron
// triggers, each checked as NewCronSchedule checks it. Errors name the
// window (from 1).
func ParseScheduleAnnotation(value string) ([]CronTrigger, error) {
	var triggers []CronTrigger
	for i, window := range strings.Split(value, ";") {
		if strings.TrimSpace(window) == "" {
			continue
		}
		tr, err := parseWindow(window)
		if err == nil {
			_, err = compileTrigger(tr)
		}
		if err != nil {
			return nil, fmt.Errorf("%s window %d (%q): %w", ScheduleAnnotation, i+1, strings.TrimSpace(window), err)
		}
		triggers = append(triggers, tr)
	}
	if len(triggers) == 0 {
		return nil, fmt.Errorf("%s is empty: give at least one window, e.g. %s", ScheduleAnnotation, annotationExample)
	}
	return triggers, nil
}

func parseWindow(window string) (CronTrigger, error) {
	fields := strings.Fields(window)
	dash, equals := -1, -1
	for i, f := range fields {
		switch {
		case f == "-" && dash < 0:
			dash = i
		case f == "=" && equals < 0:
			equals = i
		}
	}
	if dash < 2 || equals < dash+2 || equals != len(fields)-2 {
		return CronTrigger{}, fmt.Errorf("want \"<timezone> <start> - <end> = <replicas>\" with a lone \"-\" and \"=\", e.g. %s", annotationExample)
	}
	replicas, err := strconv.ParseInt(fields[equals+1], 10, 32)
	if err != nil {
		return CronTrigger{}, fmt.Errorf("replicas %q: not a whole number, e.g. %s", fields[equals+1], annotationExample)
	}
	return CronTrigger{
		Timezone:        fields[0],
		Start:           strings.Join(fields[1:dash], " "),
		End:             strings.Join(fields[dash+1:equals], " "),
		DesiredReplicas: int32(replicas),
	}, nil
}

// FormatScheduleAnnotation writes triggers as ScheduleAnnotation's value.
func FormatScheduleAnnotation(triggers []CronTrigger) string {
	windows := make([]string, 0, len(triggers))
	for _, tr := range triggers {
		windows = append(windows, fmt.Sprintf("%s %s - %s = %d", tr.Timezone, tr.Start, tr.End, tr.DesiredReplicas))
	}
	return strings.Join(windows, "; ")
}

// ParseWarmUpAnnotation reads the value of WarmUpAnnotation.
func ParseWarmUpAnnotation(value string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(value))
	if err != nil {
		return 0, fmt.Errorf("%s %q: not a duration, e.g. \"90s\" or \"3m\"", WarmUpAnnotation, value)
	}
	if d < 0 {
		return 0, errors.New(WarmUpAnnotation + " " + strconv.Quote(value) + ": negative; give the time from pod creation to Ready, e.g. \"3m\"")
	}
	return d, nil
}
