package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

func TestJobDeleted(t *testing.T) {
	elsewhere := job("team-a", twoWorkersOnePS, status())
	other := "kueue.x-k8s.io/multikueue"
	elsewhere.Spec.RunPolicy.ManagedBy = &other
	retired := job("team-a", twoWorkersOnePS, status("Created", "Running=False", "Succeeded"))
	retired.UID = "retired"
	cases := map[string]struct {
		obj      any
		retiring bool
		want     map[string]float64
	}{
		"a job":                   {obj: job("team-a", twoWorkersOnePS, status()), want: map[string]float64{"training_operator_jobs_deleted_total{framework=tensorflow,job_namespace=team-a}": 1}},
		"a tombstone":             {obj: toolscache.DeletedFinalStateUnknown{Key: "team-b/j", Obj: job("team-b", twoWorkersOnePS, status())}, want: map[string]float64{"training_operator_jobs_deleted_total{framework=tensorflow,job_namespace=team-b}": 1}},
		"a job managed elsewhere": {obj: elsewhere},
		"a job retired, not gone": {obj: retired, retiring: true},
		"something else: ignored": {obj: &corev1.Pod{}},
		"an empty tombstone":      {obj: toolscache.DeletedFinalStateUnknown{Key: "team-b/j"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			retiring := NewRetiringJobs()
			if tc.retiring {
				retiring.Add(retired.UID)
			}
			got := gather(t, func() { jobDeleted(tc.obj, retiring) })
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Series (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRetiringJobs: a job is retiring from Add until the watch sees it
// leave, or Forget says its retirement failed; a nil set holds nothing.
func TestRetiringJobs(t *testing.T) {
	cases := map[string]struct {
		retiring *RetiringJobs
		tell     func(*RetiringJobs)
		want     []bool
	}{
		"added: retired once":    {retiring: NewRetiringJobs(), tell: func(r *RetiringJobs) { r.Add("a") }, want: []bool{true, false}},
		"added, then forgotten":  {retiring: NewRetiringJobs(), tell: func(r *RetiringJobs) { r.Add("a"); r.Forget("a") }, want: []bool{false, false}},
		"another job added":      {retiring: NewRetiringJobs(), tell: func(r *RetiringJobs) { r.Add("b") }, want: []bool{false, false}},
		"nil: told, holds none":  {tell: func(r *RetiringJobs) { r.Add("a") }, want: []bool{false, false}},
		"nil: forgets, harmless": {tell: func(r *RetiringJobs) { r.Forget("a") }, want: []bool{false, false}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.tell(tc.retiring)
			got := []bool{tc.retiring.done("a"), tc.retiring.done("a")}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("done (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodUpdated(t *testing.T) {
	pod := func(owned bool, restarts ...int32) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "j-worker-0"}}
		if owned {
			yes := true
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.Kind, Name: "j", Controller: &yes}}
		}
		for i, n := range restarts {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: []string{"tensorflow", "sidecar"}[i], RestartCount: n})
		}
		return p
	}
	const inPlace = "backfill_replica_restarts_total{cause=in_place}"
	cases := map[string]struct {
		before, after *corev1.Pod
		want          map[string]float64
	}{
		"restarts of every container":        {before: pod(true, 1, 0), after: pod(true, 3, 1), want: map[string]float64{inPlace: 3}},
		"a container status appears":         {before: pod(true), after: pod(true, 2), want: map[string]float64{inPlace: 2}},
		"no change, as on a resync":          {before: pod(true, 4), after: pod(true, 4)},
		"a count that drops is not negative": {before: pod(true, 4, 0), after: pod(true, 0, 1), want: map[string]float64{inPlace: 1}},
		"a pod no TFJob owns":                {before: pod(false, 0), after: pod(false, 3)},
		"not pods":                           {before: nil, after: pod(true, 3)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var before any = tc.before
			if tc.before == nil {
				before = "not a pod"
			}
			got := gather(t, func() { podUpdated(before, tc.after) })
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Series (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodCreatedAndDeleted(t *testing.T) {
	pod := func(rtype string) *corev1.Pod {
		p := &corev1.Pod{}
		if rtype != "" {
			p.Labels = map[string]string{kubeflowv1.ReplicaTypeLabel: rtype}
		}
		return p
	}
	got := gather(t, func() {
		PodCreated(pod("worker"))
		PodCreated(pod("worker"))
		PodCreated(pod("ps"))
		PodCreated(pod("Launcher"))
		PodDeleted(pod("chief"))
		PodDeleted(pod(""))
	})
	want := map[string]float64{
		"backfill_pods_created_total{replica_type=worker}": 2,
		"backfill_pods_created_total{replica_type=ps}":     1,
		"backfill_pods_created_total{replica_type=other}":  1,
		"backfill_pods_deleted_total{replica_type=chief}":  1,
		"backfill_pods_deleted_total{replica_type=other}":  1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Series (-want +got):\n%s", diff)
	}
}
