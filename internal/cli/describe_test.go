package cli

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/queueing"
)

func describeFixtures() map[string]*description {
	jobs, pods := getFixture()
	mnist, resnet, single := &jobs[2], &jobs[3], &jobs[0]

	preempted := running(podOf(mnist, kubeflowv1.ReplicaTypePS, 1), "cpu-node-1", 0)
	preempted.DeletionTimestamp = ptrTime(ago(10 * time.Second))
	preempted.Status.Conditions = append(preempted.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler"})
	mnistPods := append([]corev1.Pod{}, pods.of(mnist)...)
	mnistPods[2] = preempted

	missingClass := makeJob("research", "bert", 2*time.Minute).replicas(kubeflowv1.ReplicaTypeWorker, 2, 1).priorityClass("does-not-exist").
		condition(kubeflowv1.JobCreated, corev1.ConditionFalse, "PriorityClassNotFound",
			"TFJob research/bert cannot start its pods: PriorityClass does-not-exist does not exist; create it, or name an existing one in spec.runPolicy.schedulingPolicy.priorityClass or the pod template's priorityClassName", time.Minute).
		goodput(0, 0, 0, time.Minute, time.Minute, -1).obj()

	llama := &jobs[4]
	quotaMessage := "couldn't assign flavors to pod set worker: insufficient quota for cpu in flavor default-flavor, request > maximum capacity (24 > 8)"
	waitingForQuota := &queueReading{workload: &queueing.Workload{Name: "tfjob-llama-8e2f1", Conditions: []metav1.Condition{
		workloadCondition(queueing.ConditionQuotaReserved, metav1.ConditionFalse, "Pending", quotaMessage, 10*time.Minute),
	}}}

	// mnist, admitted: Kueue unsuspended it and its pods run.
	admittedJob := mnist.DeepCopy()
	admittedJob.Labels = map[string]string{queueing.QueueNameLabel: "training"}
	admittedJob.Spec.RunPolicy.Suspend = ptr.To(false)
	admitted := &queueReading{workload: &queueing.Workload{Name: "tfjob-mnist-5c9d0", ClusterQueue: "cluster-queue", Conditions: []metav1.Condition{
		workloadCondition(queueing.ConditionQuotaReserved, metav1.ConditionTrue, "QuotaReserved", "Quota reserved in ClusterQueue cluster-queue", 3*time.Hour),
		workloadCondition(queueing.ConditionAdmitted, metav1.ConditionTrue, "Admitted", "The workload is admitted", 3*time.Hour),
		workloadCondition(queueing.ConditionPodsReady, metav1.ConditionTrue, "PodsReady", "All pods reached readiness and the workload is running", 2*time.Hour),
	}}}

	// bert ran, then Kueue preempted it for a job of higher priority and
	// requeued it; the operator stopped its pods.
	preemptedJob := makeJob("research", "bert", 2*time.Hour).replicas(kubeflowv1.ReplicaTypeWorker, 2, 0).queue("training", true).
		condition(kubeflowv1.JobCreated, corev1.ConditionTrue, "TFJobCreated", "TFJob research/bert is created.", 2*time.Hour).
		condition(kubeflowv1.JobRunning, corev1.ConditionFalse, "TFJobSuspended", "TFJob research/bert is suspended.", 3*time.Minute).
		condition(kubeflowv1.JobSuspended, corev1.ConditionTrue, "TFJobSuspended", "TFJob research/bert is suspended.", 3*time.Minute).
		progress(1200, -1, 4*time.Minute, 1000, 20*time.Minute).
		goodput(time.Hour+40*time.Minute, 10*time.Minute, 2*time.Minute, 5*time.Minute, 3*time.Minute, -1).obj()
	preemption := "Preempted to accommodate a workload (UID: 0a4f3c2e, JobUID: 77b1d9aa) due to prioritization in the ClusterQueue; preemptor path: /cluster-queue; preemptee path: /cluster-queue"
	evicted := &queueReading{workload: &queueing.Workload{Name: "tfjob-bert-41c7e", Conditions: []metav1.Condition{
		workloadCondition(queueing.ConditionEvicted, metav1.ConditionTrue, "Preempted", preemption, 3*time.Minute),
		workloadCondition(queueing.ConditionQuotaReserved, metav1.ConditionFalse, "Pending", preemption, 2*time.Minute),
		workloadCondition(queueing.ConditionAdmitted, metav1.ConditionFalse, "NoReservation", "The workload has no reservation", 2*time.Minute),
		workloadCondition("Requeued", metav1.ConditionTrue, "Preempted", preemption, 2*time.Minute),
	}}}

	// small jobs of one worker, suspended in a queue, whose Workload is
	// missing or says the queue is misconfigured.
	small := func(name string) *kubeflowv1.TFJob {
		return makeJob("research", name, time.Minute).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).queue("training", true).
			condition(kubeflowv1.JobCreated, corev1.ConditionTrue, "TFJobCreated", "TFJob research/"+name+" is created.", time.Minute).
			condition(kubeflowv1.JobSuspended, corev1.ConditionTrue, "TFJobSuspended", "TFJob research/"+name+" is suspended.", time.Minute).
			goodput(0, 0, 0, time.Minute, 0, -1).obj()
	}
	forbidden := fmt.Errorf("listing Kueue Workloads: %w", apierrors.NewForbidden(
		schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "workloads"}, "", errors.New(`User "alice" cannot list resource "workloads" in API group "kueue.x-k8s.io" in the namespace "research"`)))
	missingQueue := &queueReading{workload: &queueing.Workload{Name: "tfjob-typo-1b2c3", Conditions: []metav1.Condition{
		workloadCondition(queueing.ConditionQuotaReserved, metav1.ConditionFalse, "Misconfigured", "LocalQueue training doesn't exist", 50*time.Second),
	}}}

	return map[string]*description{
		"describe-queued":              {job: llama, queue: waitingForQuota},
		"describe-queue-admitted":      {job: admittedJob, pods: pods.of(mnist), queue: admitted},
		"describe-queue-preempted":     {job: preemptedJob, queue: evicted},
		"describe-queue-missing-queue": {job: small("typo"), queue: missingQueue},
		"describe-queue-no-kueue":      {job: small("lonely"), queue: &queueReading{err: queueing.ErrNoKueue}},
		"describe-queue-no-workload":   {job: small("orphan"), queue: &queueReading{}},
		"describe-queue-forbidden":     {job: small("secret"), queue: &queueReading{err: forbidden}},

		"describe-running": {job: mnist, pods: mnistPods, events: []corev1.Event{
			event(mnist, "TFJob", "Normal", "SuccessfulCreatePod", "tfjob-controller", "Created pods: mnist-chief-0, mnist-ps-0, mnist-ps-1, mnist-worker-0, mnist-worker-1, mnist-worker-2, mnist-worker-3", 3*time.Hour, 1),
			event(&mnistPods[5], "Pod", "Warning", "FailedScheduling", "default-scheduler", gpuMessage, 30*time.Second, 12),
			event(&mnistPods[4], "Pod", "Warning", "BackOff", "kubelet", "Back-off restarting failed container tensorflow", 5*time.Second, 3),
		}},
		"describe-pending-gpus":     {job: resnet, pods: pods.of(resnet)},
		"describe-missing-class":    {job: missingClass},
		"describe-single-succeeded": {job: single},
	}
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

func workloadCondition(ctype string, status metav1.ConditionStatus, reason, message string, at time.Duration) metav1.Condition {
	return metav1.Condition{Type: ctype, Status: status, Reason: reason, Message: message, LastTransitionTime: ago(at)}
}

func TestDescribe(t *testing.T) {
	for name, d := range describeFixtures() {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := renderDescription(&out, d, fixedNow); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name, out.String())
		})
	}
}

func TestWhyPendingInPlainWords(t *testing.T) {
	job := makeJob("ns", "j", time.Minute).replicas(kubeflowv1.ReplicaTypeWorker, 1, 4).obj()
	pod := func() *corev1.Pod { return podOf(job, kubeflowv1.ReplicaTypeWorker, 0) }
	nominated := unschedulable(pod(), "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.")
	nominated.Status.NominatedNodeName = "node-a"
	gated := pod()
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "backfill.dev/gang"}}
	imagePull := pod()
	imagePull.Spec.NodeName = "node-b"
	imagePull.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "tensorflow", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "pull access denied"}}}}
	run := running(pod(), "node-c", 0)
	batch := pod()
	batch.Spec.Containers[0].Resources.Requests = corev1.ResourceList{colocation.ResourceBatchCPU: resource.MustParse("3000")}
	reclaimed := unschedulable(batch, "0/5 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 3 Insufficient backfill.dev/batch-cpu. preemption: not eligible due to preemptionPolicy=Never.")

	for name, tc := range map[string]struct {
		pod  corev1.Pod
		want string
	}{
		"gpus": {pod: unschedulable(pod(), gpuMessage),
			want: "waiting for GPUs: 0/5 nodes have 4 free nvidia.com/gpu (2 with too little nvidia.com/gpu, 3 do not match its node selector or affinity)"},
		"cpu with a nominated node": {pod: nominated,
			want: "waiting for CPU: 0/2 nodes have 2 free cpu (2 with too little cpu); preempting lower-priority pods on node-a to make room"},
		"taints": {pod: unschedulable(pod(), "0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: online}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."),
			want: "no node fits: 0/3 nodes are available (3 have a taint it does not tolerate {dedicated: online})"},
		"taints without their names": {pod: unschedulable(pod(), "0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
			want: "no node fits: 0/1 nodes are available (1 have a taint it does not tolerate)"},
		"reclaimed CPU": {pod: reclaimed,
			want: "waiting for reclaimed CPU: 0/5 nodes have 3 CPU of reclaimed capacity free (backfill.dev/batch-cpu) (2 do not match its node selector or affinity, 3 with too little backfill.dev/batch-cpu); " +
				"reclaimed capacity is what online pods request but do not use, and shrinks when their use rises: see backfill describe node NODE"},
		"not yet seen":  {pod: *pod(), want: "waiting for the scheduler default-scheduler to place it"},
		"gated":         {pod: *gated, want: "held back from scheduling by its scheduling gates (backfill.dev/gang)"},
		"image pull":    {pod: *imagePull, want: "on node-b, container tensorflow waits: ImagePullBackOff: pull access denied"},
		"running":       {pod: run, want: ""},
		"other message": {pod: unschedulable(pod(), "pod has unbound immediate PersistentVolumeClaims"), want: "not schedulable: pod has unbound immediate PersistentVolumeClaims"},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, whyPending(&tc.pod)); diff != "" {
				t.Errorf("whyPending (-want +got):\n%s", diff)
			}
		})
	}
}
