package metrics

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

const (
	Worker = kubeflowv1.ReplicaTypeWorker
	PS     = kubeflowv1.ReplicaTypePS
)

var twoWorkersOnePS = map[kubeflowv1.ReplicaType]int32{Worker: 2, PS: 1}

func TestObservePass(t *testing.T) {
	created := status("Created")
	running := with(status("Created", "Running"), func(st *kubeflowv1.JobStatus) {
		active(Worker, 2, 0)(st)
		active(PS, 1, 0)(st)
	})
	cases := map[string]struct {
		// passes are the statuses written one after the other, from an
		// empty status.
		passes      []kubeflowv1.JobStatus
		restarts    map[RestartCause]int
		disruptions map[string]int
		want        map[string]float64
	}{
		"the first pass marks the job Created": {
			passes: []kubeflowv1.JobStatus{created},
			want:   map[string]float64{"training_operator_jobs_created_total{framework=tensorflow,job_namespace=team-a}": 1},
		},
		"a status written again, unchanged, counts nothing more": {
			passes: []kubeflowv1.JobStatus{created, created, created},
			want:   map[string]float64{"training_operator_jobs_created_total{framework=tensorflow,job_namespace=team-a}": 1},
		},
		"waiting for a PriorityClass is not Created; the class appearing is": {
			passes: []kubeflowv1.JobStatus{status("Created=False"), created},
			want:   map[string]float64{"training_operator_jobs_created_total{framework=tensorflow,job_namespace=team-a}": 1},
		},
		"every replica running, for the first time": {
			passes: []kubeflowv1.JobStatus{created, with(created, active(Worker, 2, 0)), running},
			want: map[string]float64{
				"training_operator_jobs_created_total{framework=tensorflow,job_namespace=team-a}": 1,
				"backfill_tfjob_time_to_running_seconds{namespace=team-a} count":                  1,
				"backfill_tfjob_time_to_running_seconds{namespace=team-a} sum":                    3600,
			},
		},
		"a succeeded replica counts as running": {
			passes: []kubeflowv1.JobStatus{created, with(running, func(st *kubeflowv1.JobStatus) { active(Worker, 1, 1)(st) })},
			want: map[string]float64{
				"training_operator_jobs_created_total{framework=tensorflow,job_namespace=team-a}": 1,
				"backfill_tfjob_time_to_running_seconds{namespace=team-a} count":                  1,
				"backfill_tfjob_time_to_running_seconds{namespace=team-a} sum":                    3600,
			},
		},
		"entering Restarting counts; staying there does not; back to running after a restart is not a time to running": {
			passes: []kubeflowv1.JobStatus{
				running,
				with(status("Created", "Restarting"), func(st *kubeflowv1.JobStatus) { active(Worker, 1, 0)(st); active(PS, 1, 0)(st); st.Restarts = 1 }),
				with(status("Created", "Restarting"), func(st *kubeflowv1.JobStatus) { active(Worker, 0, 0)(st); active(PS, 1, 0)(st); st.Restarts = 2 }),
				with(running, func(st *kubeflowv1.JobStatus) { st.Restarts = 2 }),
				with(status("Created", "Restarting"), func(st *kubeflowv1.JobStatus) {
					active(Worker, 2, 0)(st)
					active(PS, 0, 0)(st)
					st.Restarts = 2
					st.Disruptions = 1
				}),
			},
			want: map[string]float64{
				"training_operator_jobs_created_total{framework=tensorflow,job_namespace=team-a}":   1,
				"training_operator_jobs_restarted_total{framework=tensorflow,job_namespace=team-a}": 2,
				"backfill_tfjob_time_to_running_seconds{namespace=team-a} count":                    1,
				"backfill_tfjob_time_to_running_seconds{namespace=team-a} sum":                      3600,
			},
		},
		"success, with its duration": {
			passes: []kubeflowv1.JobStatus{
				running,
				with(status("Created", "Running=False", "Succeeded"), times(ago(90*time.Second), ago(0))),
				with(status("Created", "Running=False", "Succeeded"), times(ago(90*time.Second), ago(0))),
			},
			want: map[string]float64{
				"training_operator_jobs_created_total{framework=tensorflow,job_namespace=team-a}":    1,
				"training_operator_jobs_successful_total{framework=tensorflow,job_namespace=team-a}": 1,
				"backfill_tfjob_time_to_running_seconds{namespace=team-a} count":                     1,
				"backfill_tfjob_time_to_running_seconds{namespace=team-a} sum":                       3600,
				"backfill_tfjob_duration_seconds{result=succeeded} count":                            1,
				"backfill_tfjob_duration_seconds{result=succeeded} sum":                              90,
			},
		},
		"failure straight from pending: a duration, no time to running": {
			passes: []kubeflowv1.JobStatus{
				created,
				with(status("Created", "Failed"), func(st *kubeflowv1.JobStatus) {
					times(ago(30*time.Second), ago(0))(st)
					active(Worker, 2, 0)(st)
					active(PS, 1, 0)(st)
				}),
			},
			want: map[string]float64{
				"training_operator_jobs_created_total{framework=tensorflow,job_namespace=team-a}": 1,
				"training_operator_jobs_failed_total{framework=tensorflow,job_namespace=team-a}":  1,
				"backfill_tfjob_duration_seconds{result=failed} count":                            1,
				"backfill_tfjob_duration_seconds{result=failed} sum":                              30,
			},
		},
		"restarts by cause and disruptions by reason": {
			passes:      []kubeflowv1.JobStatus{created},
			restarts:    map[RestartCause]int{CauseExitCode: 2, CauseOnFailure: 1, CauseInPlace: 5, "bogus": 1},
			disruptions: map[string]int{colocation.ReasonPreemptionByScheduler: 1, "SomethingNew": 2, colocation.ReasonDeletedWhileRunning: 0},
			want: map[string]float64{
				"training_operator_jobs_created_total{framework=tensorflow,job_namespace=team-a}": 1,
				"backfill_replica_restarts_total{cause=exit_code}":                                2,
				"backfill_replica_restarts_total{cause=on_failure}":                               1,
				"backfill_disruptions_total{reason=PreemptionByScheduler}":                        1,
				"backfill_disruptions_total{reason=Other}":                                        2,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := gather(t, func() {
				j := job("team-a", twoWorkersOnePS, kubeflowv1.JobStatus{})
				for i, st := range tc.passes {
					p := Pass{Job: j, Status: &st, Now: testNow}
					if i == len(tc.passes)-1 {
						p.Restarts, p.Disruptions = tc.restarts, tc.disruptions
					}
					ObservePass(p)
					j = j.DeepCopy()
					j.Status = st
				}
			})
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Series (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAllRunning(t *testing.T) {
	cases := map[string]struct {
		replicas map[kubeflowv1.ReplicaType]int32
		st       kubeflowv1.JobStatus
		want     bool
	}{
		"no replica status yet": {replicas: twoWorkersOnePS, want: false},
		"one type short":        {replicas: twoWorkersOnePS, st: with(status(), func(st *kubeflowv1.JobStatus) { active(Worker, 2, 0)(st); active(PS, 0, 0)(st) }), want: false},
		"all active":            {replicas: twoWorkersOnePS, st: with(status(), func(st *kubeflowv1.JobStatus) { active(Worker, 2, 0)(st); active(PS, 1, 0)(st) }), want: true},
		"active or done":        {replicas: twoWorkersOnePS, st: with(status(), func(st *kubeflowv1.JobStatus) { active(Worker, 0, 2)(st); active(PS, 1, 0)(st) }), want: true},
		"a type of 0 replicas":  {replicas: map[kubeflowv1.ReplicaType]int32{Worker: 1, PS: 0}, st: with(status(), active(Worker, 1, 0)), want: true},
		"no replica at all":     {replicas: map[kubeflowv1.ReplicaType]int32{}, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			j := job("ns", tc.replicas, tc.st)
			if got := allRunning(j, &j.Status); got != tc.want {
				t.Errorf("allRunning = %v, want %v", got, tc.want)
			}
		})
	}
}
