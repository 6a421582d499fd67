package gpuloan

import (
	"fmt"
	"time"

	"github.com/backfill-dev/backfill/internal/tide"
)

// Where a workload's forecast comes from, for logs and explanations.
const (
	sourceAnnotation = "annotation"
	sourceKEDA       = "keda"
	sourceHistory    = "history"
	// sourceNone: no schedule and no history; the workload's current
	// replicas stand for its forecast, which foretells no morning.
	sourceNone = "none"
)

// forecast is an online workload's replicas over the horizon.
type forecast struct {
	w        workload
	replicas tide.ReplicaForecast
	source   string
	warmUp   time.Duration
	// problem says why a stated source was not taken, for the log.
	problem error
}

// constant is a forecast of the same replicas throughout.
type constant int32

// Steps implements tide.ReplicaForecast.
func (c constant) Steps(from, _ time.Time) []tide.Step {
	return []tide.Step{{At: from, Value: int(c)}}
}

// forecastOf picks a workload's forecast: the backfill.dev/gpu-schedule
// annotation, which states or overrides; else its ScaledObject's cron
// triggers; else its history; else its current replicas. A stated
// source that does not parse falls through to the next, with the problem
// kept for the log. Its warm-up is the backfill.dev/gpu-warm-up
// annotation's, else warmUp (measured, or the default).
func forecastOf(w workload, so *scaledObject, history *tide.History, warmUp time.Duration) forecast {
	f := forecast{w: w, warmUp: warmUp}
	if v, ok := w.annotations[tide.WarmUpAnnotation]; ok {
		d, err := tide.ParseWarmUpAnnotation(v)
		if err != nil {
			f.problem = fmt.Errorf("%s %s: %w", w.kind, w, err)
		} else {
			f.warmUp = d
		}
	}
	// Outside its windows a workload runs its floor: the ScaledObject's
	// minimum, or, with triggers no schedule foretells (or no
	// ScaledObject), at least what it runs now.
	floor := w.replicas
	if so != nil && !so.others {
		floor = so.minReplicas
	}
	if v, ok := w.annotations[tide.ScheduleAnnotation]; ok {
		triggers, err := tide.ParseScheduleAnnotation(v)
		var s *tide.CronSchedule
		if err == nil {
			s, err = tide.NewCronSchedule(triggers, min(floor, w.replicas))
		}
		if err == nil {
			f.replicas, f.source = s, sourceAnnotation
			return f
		}
		f.problem = fmt.Errorf("%s %s: %w", w.kind, w, err)
	}
	if so != nil && so.hasCrons() {
		s, err := so.schedule(floor)
		if err == nil {
			f.replicas, f.source = s, sourceKEDA
			return f
		}
		f.problem = err
	}
	if history != nil {
		f.replicas, f.source = history, sourceHistory
		return f
	}
	f.replicas, f.source = constant(w.replicas), sourceNone
	return f
}
