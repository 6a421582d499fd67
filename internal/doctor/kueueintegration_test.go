package doctor

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/queueing"
)

// queued is the job labelled for queue, created ago, suspended or not.
func queued(name, queue string, ago time.Duration, suspended bool) kubeflowv1.TFJob {
	j := makeJob(name).workers(1).obj()
	j.Labels = map[string]string{queueing.QueueNameLabel: queue}
	j.CreationTimestamp = metav1.NewTime(now.Add(-ago))
	j.Spec.RunPolicy.Suspend = &suspended
	return j
}

// withKueue is s with Kueue installed, its configuration listing
// frameworks, and a Workload for each of the jobs given.
func withKueue(s *Snapshot, frameworks []string, workloads map[types.UID]*queueing.Workload) {
	s.Kueue = KueueView{Served: true, Workloads: workloads, Frameworks: frameworks}
	if frameworks == nil {
		s.Kueue.ConfigNote = "there is no ConfigMap kueue-system/kueue-manager-config to read Kueue's configuration from"
	}
}

func TestCheckKueueIntegration(t *testing.T) {
	shipped := []string{"batch/job", "kubeflow.org/mpijob", "jobset.x-k8s.io/jobset", "pod"}
	cases := map[string]struct {
		jobs        []kubeflowv1.TFJob
		kueue       func(s *Snapshot)
		wantStatus  Status
		wantFinding []string
		wantFix     []string
	}{
		"no job asks for a queue": {
			jobs:        []kubeflowv1.TFJob{makeJob("mnist").workers(1).obj()},
			wantStatus:  StatusOK,
			wantFinding: []string{"no TFJob carries the kueue.x-k8s.io/queue-name label (Kueue is not installed)"},
		},
		"the label without Kueue": {
			jobs:       []kubeflowv1.TFJob{queued("mnist", "training", time.Minute, false)},
			wantStatus: StatusWarn,
			wantFinding: []string{"1 TFJob(s) carry the kueue.x-k8s.io/queue-name label (team-a/mnist in queue training) but Kueue is not installed",
				"the label does nothing and the jobs run without waiting for any queue"},
			wantFix: []string{"install Kueue with its TFJob integration on", "kubectl -n team-a label tfjob mnist kueue.x-k8s.io/queue-name-"},
		},
		"Kueue keeps a Workload": {
			jobs: []kubeflowv1.TFJob{queued("mnist", "training", time.Hour, true)},
			kueue: func(s *Snapshot) {
				withKueue(s, []string{queueing.TFJobFramework}, map[types.UID]*queueing.Workload{"uid-mnist": {Name: "tfjob-mnist-1a2b3"}})
			},
			wantStatus:  StatusOK,
			wantFinding: []string{"Kueue keeps a Workload for each of the 1 TFJob(s)"},
		},
		"a job too young to judge": {
			jobs:        []kubeflowv1.TFJob{queued("mnist", "training", 5*time.Second, false)},
			kueue:       func(s *Snapshot) { withKueue(s, shipped, nil) },
			wantStatus:  StatusOK,
			wantFinding: []string{"too early to tell whether Kueue's TFJob integration is on: the 1 TFJob(s) with a kueue.x-k8s.io/queue-name label were created less than 30s ago"},
		},
		"one job with a Workload, one too young to judge": {
			jobs: []kubeflowv1.TFJob{queued("mnist", "training", time.Hour, true), queued("resnet", "training", 5*time.Second, false)},
			kueue: func(s *Snapshot) {
				withKueue(s, shipped, map[types.UID]*queueing.Workload{"uid-mnist": {Name: "tfjob-mnist-1a2b3"}})
			},
			wantStatus:  StatusOK,
			wantFinding: []string{"Kueue keeps a Workload for each of the 1 TFJob(s) with a kueue.x-k8s.io/queue-name label: its TFJob integration is on (1 created less than 30s ago not judged yet)"},
		},
		"the integration off, jobs running outside the queue": {
			jobs:       []kubeflowv1.TFJob{queued("mnist", "training", 5*time.Minute, false), queued("resnet", "training", 2*time.Minute, false)},
			kueue:      func(s *Snapshot) { withKueue(s, shipped, nil) },
			wantStatus: StatusWarn,
			wantFinding: []string{
				"Kueue keeps no Workload for 2 TFJob(s) with a kueue.x-k8s.io/queue-name label (team-a/mnist in queue training, team-a/resnet in queue training; the oldest created 5m ago)",
				"the integration is off, so Kueue neither suspends nor admits these jobs: they run outside the queue's quota",
				"(ConfigMap kueue-system/kueue-manager-config lists integrations.frameworks batch/job, kubeflow.org/mpijob, jobset.x-k8s.io/jobset, pod, not kubeflow.org/tfjob)",
			},
			wantFix: []string{`add "kubeflow.org/tfjob" to integrations.frameworks`, "kubectl -n kueue-system rollout restart deployment kueue-controller-manager", "docs/queueing.md"},
		},
		"the integration off, a job suspended for good": {
			jobs:        []kubeflowv1.TFJob{queued("mnist", "training", 5*time.Minute, true)},
			kueue:       func(s *Snapshot) { withKueue(s, nil, nil) },
			wantStatus:  StatusFail,
			wantFinding: []string{"1 of them are suspended and never start", "(there is no ConfigMap kueue-system/kueue-manager-config"},
		},
		"the configuration lists TFJob: Kueue was not restarted": {
			jobs:        []kubeflowv1.TFJob{queued("mnist", "training", 5*time.Minute, false)},
			kueue:       func(s *Snapshot) { withKueue(s, append(shipped, queueing.TFJobFramework), nil) },
			wantStatus:  StatusWarn,
			wantFinding: []string{"lists kubeflow.org/tfjob, so Kueue has not been restarted since, or it does not run"},
			wantFix:     []string{"restart Kueue, which reads its configuration only when it starts"},
		},
		"finished jobs do not count": {
			jobs: []kubeflowv1.TFJob{func() kubeflowv1.TFJob {
				j := queued("mnist", "training", time.Hour, false)
				j.Status.Conditions = append(j.Status.Conditions, kubeflowv1.JobCondition{Type: kubeflowv1.JobSucceeded, Status: "True"})
				return j
			}()},
			kueue:      func(s *Snapshot) { withKueue(s, shipped, nil) },
			wantStatus: StatusOK,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Jobs = tc.jobs
			if tc.kueue != nil {
				tc.kueue(s)
			}
			got := checkKueueIntegration(s)
			if diff := cmp.Diff([]verdict{{CheckKueueIntegration, tc.wantStatus, ""}}, verdicts(got)); diff != "" {
				t.Fatalf("verdicts (-want +got):\n%s\n%+v", diff, got)
			}
			wantTexts(t, got[0], tc.wantFinding, tc.wantFix)
		})
	}
}
