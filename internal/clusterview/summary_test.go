package clusterview

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	cvt "github.com/backfill-dev/backfill/internal/clusterview/clusterviewtest"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/heaptest"
)

// realisticPod is a TFJob pod as the apiserver returns it: managed fields,
// many labels and annotations, env, volumes, probes and a full status.
func realisticPod(i int) *corev1.Pod {
	p := cvt.TFJobPod(cvt.Pod("team-a", fmt.Sprintf("mnist-worker-%d", i), "gpu-0", corev1.PodQOSGuaranteed, corev1.PodRunning,
		cvt.Container(cvt.Resources("cpu", "4", "memory", "8Gi", "nvidia.com/gpu", "1"), cvt.Resources("cpu", "4", "memory", "8Gi", "nvidia.com/gpu", "1"))),
		"mnist", "worker")
	p.UID = "5f1c2a9e-0d4b-4c5e-9f7a-2b3c4d5e6f70"
	p.ResourceVersion = "123456"
	for k, v := range map[string]string{
		"training.kubeflow.org/job-name": "mnist", "training.kubeflow.org/operator-name": "tfjob-controller",
		"training.kubeflow.org/replica-index": fmt.Sprint(i), "job-name": "mnist", "app.kubernetes.io/part-of": "training",
	} {
		p.Labels[k] = v
	}
	p.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(make([]byte, 600))}
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "backfill-manager", Operation: "Update", FieldsV1: metav1.NewFieldsV1(string(make([]byte, 1500)))}}
	c := &p.Spec.Containers[0]
	c.Name, c.Image = "tensorflow", "example/tensorflow:2.16-gpu"
	c.Command = []string{"python", "/opt/train.py", "--epochs=100", "--checkpoint-dir=/ckpt"}
	for j := range 6 {
		c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("VAR_%d", j), Value: "some-value-of-moderate-length"})
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: "TF_CONFIG", Value: string(make([]byte, 300))})
	c.VolumeMounts = []corev1.VolumeMount{{Name: "ckpt", MountPath: "/ckpt"}, {Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
	p.Spec.Volumes = []corev1.Volume{{Name: "ckpt"}, {Name: "kube-api-access"}}
	p.Spec.PriorityClassName, p.Spec.Priority = colocation.DefaultOfflinePriorityClass, ptr.To[int32](-100)
	p.Status.PodIP, p.Status.HostIP = "10.244.1.17", "10.0.0.4"
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "tensorflow", Ready: true, Image: c.Image, ImageID: "sha256:0123456789abcdef0123456789abcdef", ContainerID: "containerd://0123456789abcdef"}}
	return p
}

// TestPodSummary pins what the view keeps of a pod, whole: of the
// realistic pod's metadata only its namespace and name survive, none of
// its labels, annotations, managed fields, spec or status.
func TestPodSummary(t *testing.T) {
	sidecar := cvt.Pod("shop", "web-0", "n", corev1.PodQOSBurstable, corev1.PodRunning, cvt.Container(cvt.Resources("cpu", "1"), nil))
	sidecar.Spec.InitContainers = []corev1.Container{cvt.Container(cvt.Resources("cpu", "500m", "memory", "1Gi"), cvt.Resources("memory", "1Gi"))}
	sidecar.Spec.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	sidecar.Spec.Overhead = cvt.Resources("cpu", "50m", "memory", "64Mi")
	podLevel := cvt.Pod("shop", "api-0", "n", corev1.PodQOSGuaranteed, corev1.PodRunning, cvt.Container(nil, nil))
	podLevel.Spec.Resources = &corev1.ResourceRequirements{Requests: cvt.Resources("cpu", "3", "memory", "2Gi"), Limits: cvt.Resources("cpu", "3", "memory", "2Gi")}
	other := cvt.Pod("shop", "web-1", "n", corev1.PodQOSBestEffort, corev1.PodRunning, cvt.Container(nil, nil))
	other.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "TFJob", Name: "x", Controller: ptr.To(true)}}
	other.Labels = map[string]string{colocation.TierLabel: "offline"}
	batch := cvt.TFJobPod(cvt.Pod("team-a", "etl-worker-0", "cpu-0", corev1.PodQOSBestEffort, corev1.PodRunning,
		cvt.Container(cvt.Resources("backfill.dev/batch-cpu", "2000", "backfill.dev/batch-memory", "4Gi"), cvt.Resources("backfill.dev/batch-cpu", "2000", "backfill.dev/batch-memory", "4Gi"))),
		"etl", "worker")
	started := metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	batch.UID, batch.Status.StartTime, batch.DeletionTimestamp = "uid-etl", &started, &started
	meta := func(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
	infer := cvt.Pod("serve", "infer-7d9f-abcde", "gpu-0", corev1.PodQOSBurstable, corev1.PodRunning, cvt.Container(cvt.Resources("nvidia.com/gpu", "2"), cvt.Resources("nvidia.com/gpu", "2")))
	infer.Labels = map[string]string{"pod-template-hash": "7d9f"}
	infer.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "infer-7d9f", Controller: ptr.To(true)}}
	infer.CreationTimestamp = started
	infer.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(started.Add(90 * time.Second))}}
	cases := map[string]struct {
		pod  *corev1.Pod
		want *Pod
	}{
		"TFJob pod, whole": {
			pod: realisticPod(0),
			want: &Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "mnist-worker-0", UID: "5f1c2a9e-0d4b-4c5e-9f7a-2b3c4d5e6f70"},
				Node: "gpu-0", Phase: corev1.PodRunning, Tier: colocation.TierOffline, Priority: -100,
				QOS: corev1.PodQOSGuaranteed, TFJob: "mnist", ReplicaType: "worker",
				Requests: colocation.Resources{MilliCPU: 4000, Memory: 8 << 30, GPU: 1}, Limits: colocation.Resources{MilliCPU: 4000, Memory: 8 << 30, GPU: 1}},
		},
		"on reclaimed capacity, terminating": {
			pod: batch,
			want: &Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "etl-worker-0", UID: "uid-etl", DeletionTimestamp: &started},
				Node: "cpu-0", Phase: corev1.PodRunning, Tier: colocation.TierOffline, QOS: corev1.PodQOSBestEffort,
				TFJob: "etl", ReplicaType: "worker", Started: started.Time, Batch: colocation.Resources{MilliCPU: 2000, Memory: 4 << 30}},
		},
		"sidecar and overhead": {
			pod: sidecar,
			want: &Pod{ObjectMeta: meta("shop", "web-0"), Node: "n", Phase: corev1.PodRunning, Tier: colocation.TierOnline, QOS: corev1.PodQOSBurstable,
				Requests: colocation.Resources{MilliCPU: 1550, Memory: 1<<30 + 64<<20}, Limits: colocation.Resources{Memory: 1<<30 + 64<<20}},
		},
		"pod-level resources": {
			pod: podLevel,
			want: &Pod{ObjectMeta: meta("shop", "api-0"), Node: "n", Phase: corev1.PodRunning, Tier: colocation.TierOnline, QOS: corev1.PodQOSGuaranteed,
				Requests: colocation.Resources{MilliCPU: 3000, Memory: 2 << 30}, Limits: colocation.Resources{MilliCPU: 3000, Memory: 2 << 30}},
		},
		"online on GPUs, Ready 90 s after its creation": {
			pod: infer,
			want: &Pod{ObjectMeta: meta("serve", "infer-7d9f-abcde"), Node: "gpu-0", Phase: corev1.PodRunning, Tier: colocation.TierOnline, QOS: corev1.PodQOSBurstable,
				Requests: colocation.Resources{GPU: 2}, Limits: colocation.Resources{GPU: 2}, Workload: "infer", WarmUp: 90 * time.Second},
		},
		"offline by label, owner of another group": {
			pod:  other,
			want: &Pod{ObjectMeta: meta("shop", "web-1"), Node: "n", Phase: corev1.PodRunning, Tier: colocation.TierOffline, QOS: corev1.PodQOSBestEffort},
		},
	}
	transform := summarisePod(colocation.DefaultOfflinePriorityClass)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := transform(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			again, err := transform(got)
			if err != nil || again != got {
				t.Errorf("transforming a summary again = %v, %v; want it unchanged", again, err)
			}
		})
	}
	if _, err := transform(&corev1.Node{}); err == nil {
		t.Error("transforming a node as a pod: no error, want one")
	}
}

// BenchmarkSlimPodMemory measures the heap an informer store holds per
// pod, full and summarised as the co-location view keeps it, and reports
// both as bytes/pod:
//
//	go test -run '^$' -bench SlimPodMemory ./internal/clusterview/
//
// A benchmark, not a test: the heap is the whole process's, which other
// tests running in parallel would disturb.
func BenchmarkSlimPodMemory(b *testing.B) {
	const pods = 1000
	transform := summarisePod(colocation.DefaultOfflinePriorityClass)
	var full, slim uint64
	for b.Loop() {
		pod := func(i int) *corev1.Pod { return heaptest.FromWire(b, realisticPod(i), &corev1.Pod{}) }
		full += heaptest.PerObject(b, pods, func(i int) any { return pod(i) })
		slim += heaptest.PerObject(b, pods, func(i int) any {
			s, err := transform(pod(i))
			if err != nil {
				b.Fatal(err)
			}
			return s
		})
	}
	b.ReportMetric(float64(full)/float64(b.N), "full-bytes/pod")
	b.ReportMetric(float64(slim)/float64(b.N), "summary-bytes/pod")
}
