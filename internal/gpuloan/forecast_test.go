package gpuloan

import (
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/tide"
)

// The sources in order: the annotation states or overrides, then KEDA's
// cron triggers, then history, then the current replicas; a stated source
// that does not parse falls through and says why.
func TestForecastOf(t *testing.T) {
	morning := time.Date(2026, 12, 7, 7, 30, 0, 0, time.UTC)
	night := time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC)
	keda := &scaledObject{name: "online/infer", minReplicas: 1,
		crons: []tide.CronTrigger{{Timezone: "UTC", Start: "0 7 * * *", End: "0 22 * * *", DesiredReplicas: 6}}}
	history := historyOf(t, 3)
	cases := map[string]struct {
		annotations     map[string]string
		so              *scaledObject
		history         *tide.History
		wantSource      string
		wantMorning     int
		wantNight       int
		wantWarmUp      time.Duration
		wantProblem     bool
		currentReplicas int32
	}{
		"annotation over KEDA": {
			annotations: map[string]string{tide.ScheduleAnnotation: "UTC 0 7 * * * - 0 22 * * * = 8", tide.WarmUpAnnotation: "90s"},
			so:          keda, currentReplicas: 2,
			wantSource: sourceAnnotation, wantMorning: 8, wantNight: 1, wantWarmUp: 90 * time.Second,
		},
		"KEDA's cron triggers, its minimum outside": {
			so: keda, history: history, currentReplicas: 2,
			wantSource: sourceKEDA, wantMorning: 6, wantNight: 1, wantWarmUp: 3 * time.Minute,
		},
		"KEDA with other triggers: at least the current replicas outside": {
			so: &scaledObject{name: "online/infer", minReplicas: 1, others: true, crons: keda.crons}, currentReplicas: 2,
			wantSource: sourceKEDA, wantMorning: 6, wantNight: 2, wantWarmUp: 3 * time.Minute,
		},
		"a bad annotation falls through to KEDA": {
			annotations: map[string]string{tide.ScheduleAnnotation: "UTC 0 7 * * * = 8"},
			so:          keda, currentReplicas: 2,
			wantSource: sourceKEDA, wantMorning: 6, wantNight: 1, wantWarmUp: 3 * time.Minute, wantProblem: true,
		},
		"a bad warm-up keeps the default": {
			annotations: map[string]string{tide.WarmUpAnnotation: "soon"},
			so:          keda, currentReplicas: 2,
			wantSource: sourceKEDA, wantMorning: 6, wantNight: 1, wantWarmUp: 3 * time.Minute, wantProblem: true,
		},
		"history without a schedule": {
			history: history, currentReplicas: 2,
			wantSource: sourceHistory, wantMorning: 3, wantNight: 3, wantWarmUp: 3 * time.Minute,
		},
		"nothing: the current replicas": {
			currentReplicas: 2,
			wantSource:      sourceNone, wantMorning: 2, wantNight: 2, wantWarmUp: 3 * time.Minute,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := workload{kind: kindDeployment, namespace: "online", name: "infer", gpusPerPod: 1, replicas: tc.currentReplicas, annotations: tc.annotations}
			f := forecastOf(w, tc.so, tc.history, 3*time.Minute)
			if f.source != tc.wantSource || f.warmUp != tc.wantWarmUp || (f.problem != nil) != tc.wantProblem {
				t.Fatalf("forecastOf = source %s, warm-up %v, problem %v; want %s, %v, problem %v", f.source, f.warmUp, f.problem, tc.wantSource, tc.wantWarmUp, tc.wantProblem)
			}
			if got := at(f.replicas, morning); got != tc.wantMorning {
				t.Errorf("Replicas in the morning = %d, want %d", got, tc.wantMorning)
			}
			if got := at(f.replicas, night); got != tc.wantNight {
				t.Errorf("Replicas at night = %d, want %d", got, tc.wantNight)
			}
		})
	}
}

// at is a forecast's replicas at t.
func at(f tide.ReplicaForecast, t time.Time) int {
	return tide.Demand{Steps: f.Steps(t, t.Add(time.Minute))}.At(t)
}

// historyOf is a history of days of a constant replicas.
func historyOf(t *testing.T, replicas int32) *tide.History {
	t.Helper()
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	var samples []tide.Sample
	for ts := now.Add(-7 * 24 * time.Hour); ts.Before(now); ts = ts.Add(5 * time.Minute) {
		samples = append(samples, tide.Sample{At: ts, Replicas: replicas})
	}
	s := tide.DefaultHistorySettings()
	s.MarginPercent = 0
	h, err := tide.NewHistory(samples, now, time.UTC, s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
