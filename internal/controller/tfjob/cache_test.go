package tfjob

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/heaptest"
)

// cachedPod is a replica pod as the apiserver serves it once a kubelet
// runs it: made by podFor from a job with requests, a sidecar and the
// usual environment, with managed fields and a kubelet's status.
func cachedPod(t testing.TB, i int) *corev1.Pod {
	t.Helper()
	job := makeJob("mnist").replicas(Worker, 4, ExitCode).obj()
	tmpl := &job.Spec.TFReplicaSpecs[Worker].Template.Spec
	c := &tmpl.Containers[0]
	c.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), "nvidia.com/gpu": resource.MustParse("1")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), "nvidia.com/gpu": resource.MustParse("1")},
	}
	c.Command = []string{"python", "/opt/train.py", "--epochs=100", "--checkpoint-dir=/ckpt"}
	for j := range 6 {
		c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("VAR_%d", j), Value: "some-value-of-moderate-length"})
	}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "ckpt", MountPath: "/ckpt"}}
	tmpl.Volumes = []corev1.Volume{{Name: "ckpt", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "ckpt"}}}}
	tmpl.InitContainers = []corev1.Container{{Name: "log-shipper", Image: "example/shipper:1", RestartPolicy: ptr(corev1.ContainerRestartPolicyAlways),
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}}}
	pod, err := podFor(job, Worker, i%4, podOptions{reclaim: true, offlinePriorityClass: "backfill-offline"})
	if err != nil {
		t.Fatal(err)
	}
	pod.Name = fmt.Sprintf("%s-%d", pod.Name, i)
	pod.UID = "5f1c2a9e-0d4b-4c5e-9f7a-2b3c4d5e6f70"
	pod.ResourceVersion = "123456"
	pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "backfill-manager", Operation: "Update", FieldsV1: metav1.NewFieldsV1(string(make([]byte, 1500)))}}
	pod.Spec.NodeName, pod.Spec.Priority = "gpu-0", ptr[int32](-100)
	pod.Spec.Tolerations = []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr[int64](300)}}
	started := metav1.Now()
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning, QOSClass: corev1.PodQOSGuaranteed, StartTime: &started,
		HostIP: "10.0.0.4", PodIP: "10.244.1.17", PodIPs: []corev1.PodIP{{IP: "10.244.1.17"}}, HostIPs: []corev1.HostIP{{IP: "10.0.0.4"}},
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started},
		},
		ContainerStatuses: []corev1.ContainerStatus{{Name: kubeflowv1.ContainerName, Ready: true, Started: ptr(true), Image: "example/tensorflow:2.16-gpu",
			ImageID: "example/tensorflow@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", ContainerID: "containerd://0123456789abcdef0123456789abcdef",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}},
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "log-shipper", Ready: true, Image: "example/shipper:1", ImageID: "example/shipper@sha256:0123", ContainerID: "containerd://fedcba"}},
	}
	return pod
}

// TestSlimPodKeepsWhatTheOperatorReads: what the plan reads is covered by
// the plan tests, which run on slim pods; this pins the rest: the requests
// of an unscheduled pod, which reclaimed capacity's unfittable-pod warning
// computes, with a sidecar, overhead and pod-level resources, and all
// metadata but managed fields.
func TestSlimPodKeepsWhatTheOperatorReads(t *testing.T) {
	pod := cachedPod(t, 0)
	pod.Spec.NodeName = ""
	pod.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}
	pod.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("20Gi")}}
	slim := cached(pod.DeepCopy(), SlimPod)

	want := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	if diff := cmp.Diff(want, resourcehelper.PodRequests(slim, resourcehelper.PodResourcesOptions{})); diff != "" {
		t.Errorf("requests of the slim pod (-full +slim):\n%s", diff)
	}
	wantMeta := pod.ObjectMeta
	wantMeta.ManagedFields = nil
	if diff := cmp.Diff(wantMeta, slim.ObjectMeta); diff != "" {
		t.Errorf("metadata (-want +slim):\n%s", diff)
	}
	if slim.Spec.Volumes != nil || slim.Spec.Containers[0].Env != nil || slim.Spec.Containers[0].Image != "" || slim.Status.PodIP != "" {
		t.Errorf("slim pod keeps what no one reads: %+v", slim)
	}
	if bound := cached(cachedPod(t, 0), SlimPod); bound.Spec.Containers != nil || bound.Spec.NodeName != "gpu-0" {
		t.Errorf("a bound pod keeps its containers or loses its node: %+v", bound.Spec)
	}
	again := cached(slim.DeepCopy(), SlimPod)
	if diff := cmp.Diff(slim, again); diff != "" {
		t.Errorf("slimming twice changes the pod (-once +twice):\n%s", diff)
	}
}

// BenchmarkCachedPodMemory measures the heap an informer store holds per
// replica pod and service, decoded from protobuf as the informer gets
// them: as the cache kept them before (managed fields stripped) and slim,
// and reports both as bytes/pod and bytes/service:
//
//	go test -run '^$' -bench CachedPodMemory ./internal/controller/tfjob/
//
// A benchmark, not a test: the heap is the whole process's.
func BenchmarkCachedPodMemory(b *testing.B) {
	const pods = 1000
	strip := cache.TransformStripManagedFields()
	var before, slim, svcBefore, svcSlim uint64
	job := makeJob("mnist").replicas(Worker, 4, ExitCode).obj()
	for b.Loop() {
		pod := func(i int) *corev1.Pod { return heaptest.FromWire(b, cachedPod(b, i), &corev1.Pod{}) }
		before += heaptest.PerObject(b, pods, func(i int) any { return transformed(b, strip, pod(i)) })
		slim += heaptest.PerObject(b, pods, func(i int) any { return transformed(b, SlimPod, pod(i)) })
		svc := func(i int) *corev1.Service {
			s := serviceFor(job, Worker, i%4)
			s.Name = fmt.Sprintf("%s-%d", s.Name, i)
			s.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "backfill-manager", Operation: "Update", FieldsV1: metav1.NewFieldsV1(string(make([]byte, 600)))}}
			return heaptest.FromWire(b, s, &corev1.Service{})
		}
		svcBefore += heaptest.PerObject(b, pods, func(i int) any { return transformed(b, strip, svc(i)) })
		svcSlim += heaptest.PerObject(b, pods, func(i int) any { return transformed(b, SlimService, svc(i)) })
	}
	b.ReportMetric(float64(before)/float64(b.N), "before-bytes/pod")
	b.ReportMetric(float64(slim)/float64(b.N), "slim-bytes/pod")
	b.ReportMetric(float64(svcBefore)/float64(b.N), "before-bytes/service")
	b.ReportMetric(float64(svcSlim)/float64(b.N), "slim-bytes/service")
}

func transformed(tb testing.TB, transform toolscache.TransformFunc, obj any) any {
	out, err := transform(obj)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestSlimTFJob: a running job is kept whole but for managed fields; a
// finished one keeps what is still read of it: replica counts, restart
// policies, the run policy and the PriorityClasses its metrics name.
func TestSlimTFJob(t *testing.T) {
	build := func() *jobBuilder {
		b := makeJob("j").replicas(Chief, 1, Never).replicas(Worker, 4, ExitCode).ttl(60).cleanPodPolicy(kubeflowv1.CleanPodPolicyNone)
		b.job.Spec.TFReplicaSpecs[Worker].Template.Spec.PriorityClassName = "team-low"
		b.job.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
		return b
	}
	running := build().rawObj()
	slimRunning := cached(running.DeepCopy(), SlimTFJob)
	wantRunning := running.DeepCopy()
	wantRunning.ManagedFields = nil
	if diff := cmp.Diff(wantRunning, slimRunning); diff != "" {
		t.Errorf("running job (-want +slim):\n%s", diff)
	}

	done := build().finished(kubeflowv1.JobSucceeded, "TFJobSucceeded", ago(0)).rawObj()
	slim := cached(done.DeepCopy(), SlimTFJob)
	if diff := cmp.Diff(colocation.JobPriorityClasses(done, "backfill-offline"), colocation.JobPriorityClasses(slim, "backfill-offline")); diff != "" {
		t.Errorf("PriorityClasses (-full +slim):\n%s", diff)
	}
	if diff := cmp.Diff(done.Spec.RunPolicy, slim.Spec.RunPolicy); diff != "" {
		t.Errorf("run policy (-full +slim):\n%s", diff)
	}
	if diff := cmp.Diff(done.Status, slim.Status); diff != "" {
		t.Errorf("status (-full +slim):\n%s", diff)
	}
	for rtype, spec := range done.Spec.TFReplicaSpecs {
		got := slim.Spec.TFReplicaSpecs[rtype]
		if got == nil || *got.Replicas != *spec.Replicas || got.RestartPolicy != spec.RestartPolicy || got.Template.Spec.Containers != nil {
			t.Errorf("%s: slim replica spec %+v, want the counts and restart policy of %+v and no template", rtype, got, spec)
		}
	}
}
