package tfjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// TestPlanPassCoalescesSteps: a reported step alone is written at most
// once per interval of the status's last write; a checkpoint, and a job's
// first report, at once; a held step rides along with a status written
// for another reason.
func TestPlanPassCoalescesSteps(t *testing.T) {
	const interval = 5 * time.Second
	at := func(d time.Duration) *metav1.Time { t := metav1.NewTime(ago(d)); return &t }
	written := &kubeflowv1.Progress{Step: 100, ReportTime: *at(3 * time.Second), CheckpointStep: ptr[int64](50), CheckpointTime: at(time.Minute)}
	step := &kubeflowv1.Progress{Step: 120, ReportTime: *at(0), CheckpointStep: ptr[int64](50), CheckpointTime: at(time.Minute)}
	checkpoint := &kubeflowv1.Progress{Step: 120, ReportTime: *at(0), CheckpointStep: ptr[int64](120), CheckpointTime: at(0)}
	cases := map[string]struct {
		status     *kubeflowv1.Progress
		lastWrite  time.Duration // before testNow
		reported   *kubeflowv1.Progress
		podRunning bool // a change of its own writes the status
		wantStep   int64
		wantHeld   time.Duration
	}{
		"a first report":                                                    {lastWrite: time.Second, reported: step, wantStep: 120},
		"a step 1s after the last write":                                    {status: written, lastWrite: time.Second, reported: step, wantStep: 100, wantHeld: 4 * time.Second},
		"a step 4.5s after the last write":                                  {status: written, lastWrite: 4 * time.Second, reported: step, wantStep: 100, wantHeld: time.Second},
		"a step 5s after the last write":                                    {status: written, lastWrite: interval, reported: step, wantStep: 120},
		"a step long after the last write":                                  {status: written, lastWrite: time.Hour, reported: step, wantStep: 120},
		"a checkpoint 1s after the last one":                                {status: written, lastWrite: time.Second, reported: checkpoint, wantStep: 120},
		"a step with a write of its own":                                    {status: written, lastWrite: time.Second, reported: step, podRunning: true, wantStep: 120},
		"nothing new":                                                       {status: written, lastWrite: time.Second, reported: written},
		"a last write in this clock's future (a new leader's clock behind)": {status: written, lastWrite: -time.Minute, reported: step, wantStep: 120},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := makeJob("j").replicas(Worker, 1, Never).started(ago(time.Hour)).obj()
			// The status an earlier pass wrote for a pending pod: a pass
			// that sees the same writes nothing of its own.
			pending := observe(job, makePod(job, Worker, 0).obj())
			job.Status = planPass(job, pending, ago(time.Hour), policy{}).status
			job.Status.Progress = tc.status.DeepCopy()
			job.Status.LastReconcileTime = at(tc.lastWrite)
			obs := pending
			if tc.podRunning {
				obs = observe(job, makePod(job, Worker, 0).phase(corev1.PodRunning).obj())
			}
			obs.progress = tc.reported.DeepCopy()
			p := planPass(job, obs, testNow, policy{stepInterval: interval})
			want := tc.wantStep
			if want == 0 {
				want = tc.status.Step
			}
			if got := p.status.Progress; got == nil || got.Step != want {
				t.Errorf("status progress %+v, want step %d", got, want)
			}
			if tc.reported == checkpoint && (p.status.Progress.CheckpointStep == nil || *p.status.Progress.CheckpointStep != 120) {
				t.Errorf("checkpoint %v, want 120 at once", p.status.Progress.CheckpointStep)
			}
			if p.stepsHeld != tc.wantHeld {
				t.Errorf("steps held %v, want %v", p.stepsHeld, tc.wantHeld)
			}
			if tc.wantHeld > 0 && (p.requeueAfter == 0 || p.requeueAfter > tc.wantHeld) {
				t.Errorf("requeue after %v, want a pass within %v to write the held step", p.requeueAfter, tc.wantHeld)
			}
			if (tc.wantHeld > 0 || tc.reported == written) && !statusEqual(job.Status, p.status) {
				t.Errorf("the pass writes the status, want no write: %s", cmp.Diff(job.Status, p.status))
			}
		})
	}
}
