package tide

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	_ "time/tzdata" // the manager's image has no zoneinfo of its own

	"github.com/robfig/cron/v3"
)

// CronTrigger is a KEDA cron trigger's metadata, field for field.
type CronTrigger struct {
	// Timezone is an IANA time zone, e.g. "Europe/Berlin".
	Timezone string
	// Start and End are 5-field cron expressions (minute hour day-of-month
	// month day-of-week), read in Timezone.
	Start, End string
	// DesiredReplicas holds from each Start until the next End.
	DesiredReplicas int32
}

// maxEventsPerSpec bounds the events one cron expression contributes to a
// horizon, so that "* * * * *" over a week stays cheap. It is a cap, not an
// error: an every-minute expression reaches it after almost 14 days, an
// every-5-minutes one after 69, far beyond a forecast's horizon of a day or
// two; a horizon past it misses that expression's later starts or ends
// (Steps).
const maxEventsPerSpec = 20000

// CronSchedule is a workload's replicas as KEDA's cron scaler makes them:
// inside a trigger's [start, end) its desiredReplicas, outside every
// trigger the floor (the ScaledObject's minReplicaCount, or the workload's
// replicas), and with several triggers the highest.
type CronSchedule struct {
	floor    int32
	triggers []compiledTrigger
}

type compiledTrigger struct {
	loc        *time.Location
	start, end cron.Schedule
	desired    int32
}

// NewCronSchedule validates the triggers and compiles them. floor is the
// replicas outside every trigger. Errors name the trigger (from 1) and the
// field, and say what a valid value looks like.
func NewCronSchedule(triggers []CronTrigger, floor int32) (*CronSchedule, error) {
	if floor < 0 {
		return nil, fmt.Errorf("replicas outside the schedule: %d is negative; use the workload's minimum replicas, 0 or more", floor)
	}
	if len(triggers) == 0 {
		return nil, errors.New("no cron trigger: state at least one window, e.g. timezone \"Europe/Berlin\", start \"0 7 * * *\", end \"0 22 * * *\", desiredReplicas 8")
	}
	s := &CronSchedule{floor: floor}
	for i, tr := range triggers {
		c, err := compileTrigger(tr)
		if err != nil {
			return nil, fmt.Errorf("trigger %d: %w", i+1, err)
		}
		s.triggers = append(s.triggers, c)
	}
	return s, nil
}

func compileTrigger(tr CronTrigger) (compiledTrigger, error) {
	if tr.Timezone == "" {
		return compiledTrigger{}, errors.New("timezone is empty: name an IANA time zone, e.g. \"Europe/Berlin\" or \"UTC\"")
	}
	loc, err := time.LoadLocation(tr.Timezone)
	if err != nil {
		return compiledTrigger{}, fmt.Errorf("timezone %q: not an IANA time zone, e.g. \"Europe/Berlin\" or \"UTC\": %w", tr.Timezone, err)
	}
	start, err := parseCron(tr.Start)
	if err != nil {
		return compiledTrigger{}, fmt.Errorf("start %q: %w", tr.Start, err)
	}
	end, err := parseCron(tr.End)
	if err != nil {
		return compiledTrigger{}, fmt.Errorf("end %q: %w", tr.End, err)
	}
	if strings.Join(strings.Fields(tr.Start), " ") == strings.Join(strings.Fields(tr.End), " ") {
		return compiledTrigger{}, fmt.Errorf("start and end are both %q: KEDA refuses a window that ends when it starts; give the end its own time, e.g. \"0 22 * * *\"", tr.Start)
	}
	if tr.DesiredReplicas < 0 {
		return compiledTrigger{}, fmt.Errorf("desiredReplicas %d is negative: give the replicas inside the window, 0 or more", tr.DesiredReplicas)
	}
	return compiledTrigger{loc: loc, start: start, end: end, desired: tr.DesiredReplicas}, nil
}

// parseCron parses as KEDA does (robfig/cron's standard parser: 5 fields
// or a descriptor such as @daily).
func parseCron(spec string) (cron.Schedule, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, errors.New("empty: give 5 cron fields (minute hour day-of-month month day-of-week), e.g. \"0 7 * * *\"")
	}
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("%w; 5 cron fields are minute hour day-of-month month day-of-week, e.g. \"0 7 * * *\"", err)
	}
	return sched, nil
}

// active is KEDA's rule: a trigger is active at t unless its next start
// comes before its next end, so it holds over [start, end).
func (c compiledTrigger) active(t time.Time) bool {
	local := t.In(c.loc)
	return !c.start.Next(local).Before(c.end.Next(local))
}

// Replicas returns the replicas at t.
func (s *CronSchedule) Replicas(t time.Time) int32 {
	replicas := s.floor
	for _, c := range s.triggers {
		if c.desired > replicas && c.active(t) {
			replicas = c.desired
		}
	}
	return replicas
}

// Steps returns the replicas over [from, to): a step at from and one at
// every start or end that changes them, of each expression the first
// maxEventsPerSpec only.
func (s *CronSchedule) Steps(from, to time.Time) []Step {
	times := []time.Time{from}
	for _, c := range s.triggers {
		for _, spec := range []cron.Schedule{c.start, c.end} {
			t := from.In(c.loc)
			for range maxEventsPerSpec {
				t = spec.Next(t)
				if t.IsZero() || !t.Before(to) {
					break
				}
				times = append(times, t)
			}
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	steps := make([]Step, 0, len(times))
	for _, t := range times {
		steps = append(steps, Step{At: t, Value: int(s.Replicas(t))})
	}
	return merged(steps)
}
