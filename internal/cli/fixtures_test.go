package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/queueing"
)

// update rewrites the golden files: go test ./internal/cli -update.
var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// fixedNow is the clock of every rendering test.
var fixedNow = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(fixedNow.Add(-d)) }

// checkGolden compares got with testdata/name.golden.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run with -update to create it): %v", path, err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; run with -update if the change is intended):\n%s", path, diff)
	}
}

// jobBuilder makes TFJobs for the rendering tests.
type jobBuilder struct{ job *kubeflowv1.TFJob }

func makeJob(namespace, name string, created time.Duration) *jobBuilder {
	return &jobBuilder{job: &kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + name), CreationTimestamp: ago(created)},
		Spec:       kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}},
	}}
}

func (b *jobBuilder) replicas(rtype kubeflowv1.ReplicaType, n int32, gpus int64) *jobBuilder {
	requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
	if gpus > 0 {
		requests["nvidia.com/gpu"] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	b.job.Spec.TFReplicaSpecs[rtype] = &kubeflowv1.ReplicaSpec{
		Replicas:      ptr.To(n),
		RestartPolicy: kubeflowv1.RestartPolicyOnFailure,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: kubeflowv1.ContainerName, Image: "tensorflow/tensorflow:2.15.0",
			Resources: corev1.ResourceRequirements{Requests: requests},
		}}}},
	}
	return b
}

func (b *jobBuilder) condition(ctype kubeflowv1.JobConditionType, status corev1.ConditionStatus, reason, message string, at time.Duration) *jobBuilder {
	b.job.Status.Conditions = append(b.job.Status.Conditions, kubeflowv1.JobCondition{
		Type: ctype, Status: status, Reason: reason, Message: message, LastUpdateTime: ago(at), LastTransitionTime: ago(at),
	})
	return b
}

func (b *jobBuilder) counts(restarts, disruptions int32) *jobBuilder {
	b.job.Status.Restarts, b.job.Status.Disruptions = restarts, disruptions
	return b
}

func (b *jobBuilder) priorityClass(name string) *jobBuilder {
	b.job.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{PriorityClass: name}
	return b
}

// progress is what the training code reported: step (and epoch, when
// not negative) reported ago, and a checkpoint of checkpointStep made
// checkpointed ago, when checkpointed is not negative.
func (b *jobBuilder) progress(step, epoch int64, reported time.Duration, checkpointStep int64, checkpointed time.Duration) *jobBuilder {
	p := &kubeflowv1.Progress{Step: step, ReportTime: ago(reported)}
	if epoch >= 0 {
		p.Epoch = ptr.To(epoch)
	}
	if checkpointed >= 0 {
		p.CheckpointStep, p.CheckpointTime = ptr.To(checkpointStep), ptr.To(ago(checkpointed))
	}
	b.job.Status.Progress = p
	return b
}

// goodput is the account as the manager last wrote it, accounted ago;
// runningSince, when not negative, says every replica runs since then.
func (b *jobBuilder) goodput(productive, lost, recovery, waiting, accounted, runningSince time.Duration) *jobBuilder {
	sec := func(d time.Duration) int64 { return int64(d / time.Second) }
	g := &kubeflowv1.Goodput{
		ProductiveSeconds: sec(productive), ProgressLostSeconds: sec(lost), RecoverySeconds: sec(recovery), WaitingSeconds: sec(waiting),
		AccountedTime: ago(accounted),
	}
	if runningSince >= 0 {
		g.RunningSince = ptr.To(ago(runningSince))
	}
	b.job.Status.Goodput = g
	return b
}

// queue submits the job to Kueue's LocalQueue name; suspended, it waits
// there as Kueue's webhook leaves it.
func (b *jobBuilder) queue(name string, suspended bool) *jobBuilder {
	if b.job.Labels == nil {
		b.job.Labels = map[string]string{}
	}
	b.job.Labels[queueing.QueueNameLabel] = name
	b.job.Spec.RunPolicy.Suspend = ptr.To(suspended)
	return b
}

func (b *jobBuilder) obj() *kubeflowv1.TFJob { return b.job }

// podOf makes the pod of one replica as the operator creates it, with
// TF_CONFIG for the job's cluster.
func podOf(job *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType, index int) *corev1.Pod {
	lower := strings.ToLower(string(rtype))
	name := fmt.Sprintf("%s-%s-%d", job.Name, lower, index)
	labels := map[string]string{
		kubeflowv1.OperatorNameLabel: kubeflowv1.OperatorName, kubeflowv1.JobNameLabel: job.Name,
		kubeflowv1.ReplicaTypeLabel: lower, kubeflowv1.ReplicaIndexLabel: strconv.Itoa(index),
	}
	if rtype == kubeflowv1.ReplicaTypeChief {
		labels[kubeflowv1.JobRoleLabel] = kubeflowv1.JobRoleMaster
	}
	cluster := map[string][]string{}
	for t, spec := range job.Spec.TFReplicaSpecs {
		l := strings.ToLower(string(t))
		for i := range spec.ReplicaCount() {
			cluster[l] = append(cluster[l], fmt.Sprintf("%s-%s-%d.%s.svc:2222", job.Name, l, i, job.Namespace))
		}
	}
	tfc, _ := json.Marshal(map[string]any{"cluster": cluster, "task": map[string]any{"type": lower, "index": index}, "environment": "cloud"})
	container := *job.Spec.TFReplicaSpecs[rtype].Template.Spec.Containers[0].DeepCopy()
	container.Env = append(container.Env, corev1.EnvVar{Name: "TF_CONFIG", Value: string(tfc)})
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: name, UID: types.UID("uid-" + name), Labels: labels, CreationTimestamp: job.CreationTimestamp},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{container}, PriorityClassName: "backfill-offline"},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
}

// running puts the pod on node, running and ready, with restarts.
func running(pod *corev1.Pod, node string, restarts int32) corev1.Pod {
	pod.Spec.NodeName = node
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: kubeflowv1.ContainerName, Ready: true, RestartCount: restarts,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	return *pod
}

// unschedulable leaves the pod pending with the scheduler's message.
func unschedulable(pod *corev1.Pod, message string) corev1.Pod {
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: message}}
	return *pod
}

// crashLooping puts the pod on node, its container in CrashLoopBackOff.
func crashLooping(pod *corev1.Pod, node string, restarts int32) corev1.Pod {
	p := running(pod, node, restarts)
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	p.Status.ContainerStatuses[0].Ready = false
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container"}}
	p.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}
	return p
}

func event(about metav1.Object, kind, etype, reason, from, message string, at time.Duration, count int32) corev1.Event {
	return corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: about.GetNamespace(), Name: about.GetName() + "." + reason},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: about.GetNamespace(), Name: about.GetName(), UID: about.GetUID()},
		Type:           etype, Reason: reason, Message: message, Source: corev1.EventSource{Component: from},
		LastTimestamp: ago(at), FirstTimestamp: ago(at), Count: count,
	}
}

// gpuMessage is the scheduler's message for a pod that wants more GPUs
// than any node has free, as kube-scheduler 1.37 writes it.
const gpuMessage = "0/5 nodes are available: 2 Insufficient nvidia.com/gpu, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."
