package tfjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

func TestPodForReclaimedCapacity(t *testing.T) {
	asked := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"), "nvidia.com/gpu": resource.MustParse("1")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), "nvidia.com/gpu": resource.MustParse("1")},
	}
	// Batch resources for the scheduler, cpu and memory requests of 0
	// (counted by nothing, present for quotas) and the template's limits.
	reclaimed := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			colocation.ResourceBatchCPU:    resource.MustParse("2000"),
			colocation.ResourceBatchMemory: resource.MustParse("4Gi"),
			corev1.ResourceCPU:             resource.MustParse("0"),
			corev1.ResourceMemory:          resource.MustParse("0"),
			"nvidia.com/gpu":               resource.MustParse("1"),
		},
		Limits: corev1.ResourceList{
			colocation.ResourceBatchCPU:    resource.MustParse("2000"),
			colocation.ResourceBatchMemory: resource.MustParse("4Gi"),
			corev1.ResourceCPU:             resource.MustParse("4"),
			corev1.ResourceMemory:          resource.MustParse("8Gi"),
			"nvidia.com/gpu":               resource.MustParse("1"),
		},
	}
	cases := map[string]struct {
		reclaim      bool
		annotation   string
		want         corev1.ResourceRequirements
		wantOriginal bool
	}{
		"reclaimed capacity: batch resources in place of cpu and memory requests, limits and GPUs kept": {
			reclaim: true, want: reclaimed, wantOriginal: true,
		},
		"the job opts out": {
			reclaim: true, annotation: colocation.CapacityRequested, want: asked,
		},
		"the job asks for it by name": {
			reclaim: true, annotation: colocation.CapacityReclaimed, want: reclaimed, wantOriginal: true,
		},
		"the manager runs without reclaim": {
			want: asked,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := makeJob("j").replicas(Worker, 1, Never).obj()
			job.Spec.TFReplicaSpecs[Worker].Template.Spec.Containers[0].Resources = *asked.DeepCopy()
			if tc.annotation != "" {
				job.Annotations = map[string]string{colocation.CapacityAnnotation: tc.annotation}
			}
			pod, err := podFor(job, Worker, 0, podOptions{reclaim: tc.reclaim})
			if err != nil {
				t.Fatal(err)
			}
			byValue := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
			if diff := cmp.Diff(tc.want, pod.Spec.Containers[0].Resources, byValue); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
			original, err := colocation.OriginalResources(pod.Annotations)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantOriginal {
				want := corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
				}
				if diff := cmp.Diff(want, original["tensorflow"]); diff != "" {
					t.Errorf("original resources (-want +got):\n%s", diff)
				}
			} else if original != nil {
				t.Errorf("original resources %v on a pod on requested capacity", original)
			}
		})
	}
}

// An unknown backfill.dev/capacity value holds a new job, as a missing
// PriorityClass does, and keeps a started one from creating pods.
func TestPlanInvalidCapacity(t *testing.T) {
	job := makeJob("j").replicas(Worker, 2, Never).obj()
	job.Annotations = map[string]string{colocation.CapacityAnnotation: "idle"}
	p := planPass(job, observe(job), testNow, defaultPolicy)
	if diff := cmp.Diff([]string{"Created=False/InvalidCapacity"}, summariseStatus(p.status).Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if len(p.createPods) != 0 || p.status.StartTime != nil {
		t.Errorf("Planned %d pods and startTime %v for a job with an invalid capacity", len(p.createPods), p.status.StartTime)
	}
	if diff := cmp.Diff([]string{"Warning/InvalidCapacity"}, summarisePlan(job, p).Events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	started := makeJob("j").replicas(Worker, 2, Never).started(ago(time.Minute)).
		condition(kubeflowv1.JobCreated, corev1.ConditionTrue, reasonCreated, ago(time.Minute)).obj()
	started.Annotations = map[string]string{colocation.CapacityAnnotation: "idle"}
	p = planPass(started, observe(started, runningPod(Worker, 0)), testNow, defaultPolicy)
	if len(p.createPods) != 0 {
		t.Errorf("Planned pods %v for a started job with an invalid capacity", p.createPods)
	}
	if diff := cmp.Diff([]string{"Warning/InvalidCapacity"}, summarisePlan(started, p).Events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
