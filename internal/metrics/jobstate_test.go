package metrics

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

func TestJobState(t *testing.T) {
	running := job("team-a", map[kubeflowv1.ReplicaType]int32{kubeflowv1.ReplicaTypePS: 1, kubeflowv1.ReplicaTypeWorker: 2},
		with(status("Created", "Running"), func(st *kubeflowv1.JobStatus) {
			active(kubeflowv1.ReplicaTypeWorker, 2, 0)(st)
			st.ReplicaStatuses[kubeflowv1.ReplicaTypePS] = &kubeflowv1.ReplicaStatus{Active: 1, Failed: 1}
			st.Restarts, st.Disruptions = 2, 3
			st.Conditions[1].LastTransitionTime = metav1.NewTime(ago(30 * time.Minute))
			// Accounted when it last started, 30 minutes ago: the scrape
			// adds those 30 minutes to productive.
			st.Goodput = &kubeflowv1.Goodput{ProductiveSeconds: 1200, ProgressLostSeconds: 300, RecoverySeconds: 240, WaitingSeconds: 60,
				AccountedTime: metav1.NewTime(ago(30 * time.Minute)), RunningSince: ptr.To(metav1.NewTime(ago(30 * time.Minute)))}
			st.Progress = &kubeflowv1.Progress{Step: 4200, ReportTime: metav1.NewTime(ago(time.Minute)),
				CheckpointStep: ptr.To(int64(4000)), CheckpointTime: ptr.To(metav1.NewTime(ago(10 * time.Minute)))}
		}))
	running.Name = "running"
	running.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{PriorityClass: "batch-low"}

	done := job("team-b", map[kubeflowv1.ReplicaType]int32{kubeflowv1.ReplicaTypeWorker: 1},
		with(status("Created", "Running=False", "Succeeded"), func(st *kubeflowv1.JobStatus) {
			st.Conditions[1].LastUpdateTime = metav1.NewTime(ago(20 * time.Minute))
			st.Conditions[1].LastTransitionTime = metav1.NewTime(ago(5 * time.Minute))
			st.ReplicaStatuses = map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaStatus{kubeflowv1.ReplicaTypeWorker: {Succeeded: 1}}
			// Closed when it succeeded: the scrape adds nothing.
			st.Goodput = &kubeflowv1.Goodput{ProductiveSeconds: 2400, WaitingSeconds: 600, AccountedTime: metav1.NewTime(ago(10 * time.Minute))}
			st.Progress = &kubeflowv1.Progress{Step: 9000, ReportTime: metav1.NewTime(ago(10 * time.Minute))} // no checkpoint
		}))
	done.Name = "done"
	done.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec.PriorityClassName = "team-b-training"

	fresh := job("team-a", map[kubeflowv1.ReplicaType]int32{kubeflowv1.ReplicaTypeWorker: 1}, status())
	fresh.Name = "fresh"
	fresh.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Replicas = nil // defaults to 1

	created := float64(ago(time.Hour).Unix())
	want := map[string]float64{
		"backfill_tfjob_info{namespace=team-a,phase=Running,priority_class=batch-low,tfjob=running}":      1,
		"backfill_tfjob_replicas{namespace=team-a,replica_type=ps,state=desired,tfjob=running}":           1,
		"backfill_tfjob_replicas{namespace=team-a,replica_type=ps,state=active,tfjob=running}":            1,
		"backfill_tfjob_replicas{namespace=team-a,replica_type=ps,state=succeeded,tfjob=running}":         0,
		"backfill_tfjob_replicas{namespace=team-a,replica_type=ps,state=failed,tfjob=running}":            1,
		"backfill_tfjob_replicas{namespace=team-a,replica_type=worker,state=desired,tfjob=running}":       2,
		"backfill_tfjob_replicas{namespace=team-a,replica_type=worker,state=active,tfjob=running}":        2,
		"backfill_tfjob_replicas{namespace=team-a,replica_type=worker,state=succeeded,tfjob=running}":     0,
		"backfill_tfjob_replicas{namespace=team-a,replica_type=worker,state=failed,tfjob=running}":        0,
		"backfill_tfjob_restarts{namespace=team-a,tfjob=running}":                                         2,
		"backfill_tfjob_disruptions{namespace=team-a,tfjob=running}":                                      3,
		"backfill_tfjob_created_timestamp_seconds{namespace=team-a,tfjob=running}":                        created,
		"backfill_tfjob_running_timestamp_seconds{namespace=team-a,tfjob=running}":                        float64(ago(30 * time.Minute).Unix()),
		"backfill_tfjob_goodput_seconds{cause=productive,namespace=team-a,tfjob=running}":                 3000,
		"backfill_tfjob_goodput_seconds{cause=progress_lost,namespace=team-a,tfjob=running}":              300,
		"backfill_tfjob_goodput_seconds{cause=recovery,namespace=team-a,tfjob=running}":                   240,
		"backfill_tfjob_goodput_seconds{cause=waiting,namespace=team-a,tfjob=running}":                    60,
		"backfill_tfjob_progress_step{namespace=team-a,tfjob=running}":                                    4200,
		"backfill_tfjob_checkpoint_timestamp_seconds{namespace=team-a,tfjob=running}":                     float64(ago(10 * time.Minute).Unix()),
		"backfill_tfjob_info{namespace=team-b,phase=Succeeded,priority_class=team-b-training,tfjob=done}": 1,
		"backfill_tfjob_replicas{namespace=team-b,replica_type=worker,state=desired,tfjob=done}":          1,
		"backfill_tfjob_replicas{namespace=team-b,replica_type=worker,state=active,tfjob=done}":           0,
		"backfill_tfjob_replicas{namespace=team-b,replica_type=worker,state=succeeded,tfjob=done}":        1,
		"backfill_tfjob_replicas{namespace=team-b,replica_type=worker,state=failed,tfjob=done}":           0,
		"backfill_tfjob_restarts{namespace=team-b,tfjob=done}":                                            0,
		"backfill_tfjob_disruptions{namespace=team-b,tfjob=done}":                                         0,
		"backfill_tfjob_created_timestamp_seconds{namespace=team-b,tfjob=done}":                           created,
		"backfill_tfjob_running_timestamp_seconds{namespace=team-b,tfjob=done}":                           float64(ago(20 * time.Minute).Unix()),
		"backfill_tfjob_goodput_seconds{cause=productive,namespace=team-b,tfjob=done}":                    2400,
		"backfill_tfjob_goodput_seconds{cause=progress_lost,namespace=team-b,tfjob=done}":                 0,
		"backfill_tfjob_goodput_seconds{cause=recovery,namespace=team-b,tfjob=done}":                      0,
		"backfill_tfjob_goodput_seconds{cause=waiting,namespace=team-b,tfjob=done}":                       600,
		"backfill_tfjob_progress_step{namespace=team-b,tfjob=done}":                                       9000,
		"backfill_tfjob_info{namespace=team-a,phase=Pending,priority_class=backfill-offline,tfjob=fresh}": 1,
		"backfill_tfjob_replicas{namespace=team-a,replica_type=worker,state=desired,tfjob=fresh}":         1,
		"backfill_tfjob_replicas{namespace=team-a,replica_type=worker,state=active,tfjob=fresh}":          0,
		"backfill_tfjob_replicas{namespace=team-a,replica_type=worker,state=succeeded,tfjob=fresh}":       0,
		"backfill_tfjob_replicas{namespace=team-a,replica_type=worker,state=failed,tfjob=fresh}":          0,
		"backfill_tfjob_restarts{namespace=team-a,tfjob=fresh}":                                           0,
		"backfill_tfjob_disruptions{namespace=team-a,tfjob=fresh}":                                        0,
		"backfill_tfjob_created_timestamp_seconds{namespace=team-a,tfjob=fresh}":                          created,
		// Never accounted, never ran: its whole hour is waiting.
		"backfill_tfjob_goodput_seconds{cause=productive,namespace=team-a,tfjob=fresh}":    0,
		"backfill_tfjob_goodput_seconds{cause=progress_lost,namespace=team-a,tfjob=fresh}": 0,
		"backfill_tfjob_goodput_seconds{cause=recovery,namespace=team-a,tfjob=fresh}":      0,
		"backfill_tfjob_goodput_seconds{cause=waiting,namespace=team-a,tfjob=fresh}":       3600,
	}
	leading := make(chan struct{})
	close(leading)
	cases := map[string]struct {
		reader  client.Reader
		leading <-chan struct{}
		want    map[string]float64
	}{
		"every job's state":     {reader: fakeReader(t, running, done, fresh), leading: leading, want: want},
		"not leading: nothing":  {reader: fakeReader(t, running), leading: make(chan struct{})},
		"the cache fails: none": {reader: failingReader{}, leading: leading},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := newJobStateCollector()
			c.now = func() time.Time { return testNow }
			c.use(tc.reader, tc.leading, "backfill-offline")
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(c)
			families, err := reg.Gather()
			if err != nil {
				t.Fatalf("Gathering: %v", err)
			}
			if diff := cmp.Diff(tc.want, series(families), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Series (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunningSinceNeedsARunningCondition(t *testing.T) {
	st := kubeflowv1.JobStatus{Conditions: []kubeflowv1.JobCondition{{Type: kubeflowv1.JobCreated, Status: corev1.ConditionTrue}}}
	if at, ok := runningSince(&st); ok {
		t.Errorf("runningSince of a job that never ran = %v, want none", at)
	}
}
