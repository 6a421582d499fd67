package tfjob

import (
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// The scheduler's messages about a pod it could not place.
const (
	noBatchCPU = "0/3 nodes are available: 3 Insufficient backfill.dev/batch-cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
	noGPU      = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
	noCPU      = "0/3 nodes are available: 3 Insufficient cpu."
)

// reclaimedPods are the pods of waiting(message) as the operator creates
// them on reclaimed capacity, with the template's resources kept.
func reclaimedPods(pods []*corev1.Pod) []*corev1.Pod {
	for _, pod := range pods {
		pod.Annotations = map[string]string{colocation.OriginalResourcesAnnotation: `{"tensorflow":{"requests":{"cpu":"2"}}}`}
	}
	return pods
}

// waitingPod is a pod on reclaimed capacity, asking 2 CPU and 4Gi, that
// the scheduler could not place, saying message.
func waitingPod(job *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType, index int, message string) *corev1.Pod {
	pod := makePod(job, rtype, index).obj()
	batch := corev1.ResourceList{colocation.ResourceBatchCPU: resource.MustParse("2000"), colocation.ResourceBatchMemory: resource.MustParse("4Gi")}
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: batch, Limits: batch}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: message}}
	return pod
}

// placed is the pod once the scheduler placed it.
func placed(pod *corev1.Pod) *corev1.Pod {
	pod = pod.DeepCopy()
	pod.Spec.NodeName = "cpu-0"
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	return pod
}

func TestCapacityPending(t *testing.T) {
	unavailable := reclaim.Supply{Decided: true, Reason: reclaim.ReasonUsageSourceUnavailable, Ceiling: res(14000, 50),
		Message: "the metrics-api usage source fails: the server could not find the requested resource; install metrics-server"}
	publishing := reclaim.Supply{Decided: true, Publishing: true, Ceiling: res(14000, 50)}
	small := reclaim.Supply{Decided: true, Publishing: true, Ceiling: res(1500, 50)}
	job := makeJob("j").replicas(Worker, 2, Never).started(ago(time.Minute)).obj()
	waiting := func(message string) []*corev1.Pod {
		return podList(waitingPod(job, Worker, 0, message), waitingPod(job, Worker, 1, message))
	}
	cases := map[string]struct {
		supply      *reclaim.Supply
		pods        []*corev1.Pod
		wantReason  string // "" for no condition
		wantMessage []string
	}{
		"no node publishes: the reclaim controller's cause and its fix": {
			supply: &unavailable, pods: waiting(noBatchCPU), wantReason: reclaim.ReasonUsageSourceUnavailable,
			wantMessage: []string{"TFJob ns/j waits: its pods ask for reclaimed capacity and no node publishes any: the metrics-api usage source fails",
				"install metrics-server", "or submit the job again with the annotation backfill.dev/capacity: requested to run it on the cpu and memory it requests"},
		},
		"nodes publish, none has room": {
			supply: &publishing, pods: waiting(noBatchCPU), wantReason: reasonInsufficientReclaimed,
			wantMessage: []string{"no node has enough free now", "`backfill doctor j -n ns`", "backfill.dev/capacity: requested"},
		},
		"a pod asks more than any node could ever offer": {
			supply: &small, pods: waiting(noBatchCPU), wantReason: reclaim.ReasonExceedsReclaimableCapacity,
			wantMessage: []string{"a pod asks for cpu 2, memory 4Gi of reclaimed capacity, more than any node can ever offer (at most cpu 1500m, memory 50Gi", "lower the template's cpu or memory requests, or submit the job again"},
		},
		"one pod still waits": {
			supply: &unavailable, pods: podList(placed(waitingPod(job, Worker, 0, noBatchCPU)), waitingPod(job, Worker, 1, noBatchCPU)), wantReason: reclaim.ReasonUsageSourceUnavailable,
		},
		"the pods wait for something else": {
			supply: &unavailable, pods: waiting(noGPU),
		},
		"a LimitRange made reclaimed pods request cpu that no node has": {
			supply: &publishing, pods: reclaimedPods(waiting(noCPU)), wantReason: reasonLimitRangeRequest,
			wantMessage: []string{"a LimitRange of namespace ns (its min or maxLimitRequestRatio) makes the job's pods request cpu or memory", "backfill.dev/capacity: requested"},
		},
		"pods on requested capacity wait for cpu: not a reclaimed wait": {
			supply: &publishing, pods: waiting(noCPU),
		},
		"the pods are placed": {
			supply: &publishing, pods: podList(placed(waitingPod(job, Worker, 0, noBatchCPU)), placed(waitingPod(job, Worker, 1, noBatchCPU))),
		},
		"the reclaim controller has not decided yet": {
			supply: &reclaim.Supply{}, pods: waiting(noBatchCPU),
		},
		"the manager runs without reclaimed capacity": {
			pods: waiting(noBatchCPU),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := observe(job, tc.pods...)
			obs.supply = tc.supply
			p := planPass(job, obs, testNow, defaultPolicy)
			c := findCondition(&p.status, kubeflowv1.JobCapacityPending)
			switch {
			case tc.wantReason == "" && c != nil:
				t.Fatalf("condition %+v: want none", *c)
			case tc.wantReason == "":
				return
			case c == nil:
				t.Fatalf("no CapacityPending condition in %+v: want reason %s", p.status.Conditions, tc.wantReason)
			}
			if c.Status != corev1.ConditionTrue || c.Reason != tc.wantReason {
				t.Errorf("condition %s/%s: want True/%s", c.Status, c.Reason, tc.wantReason)
			}
			for _, want := range tc.wantMessage {
				if !strings.Contains(c.Message, want) {
					t.Errorf("message %q: want %q in it", c.Message, want)
				}
			}
			// It is no state: the job's state is still its last condition.
			if p.status.Conditions[0].Type != kubeflowv1.JobCapacityPending || lastCondition(&p.status).Type != kubeflowv1.JobCreated {
				t.Errorf("conditions %v: want CapacityPending first and Created, the state, last", summariseStatus(p.status).Conditions)
			}
		})
	}
}

// The condition is written when its reason changes, and only then: a pass
// that finds the same reason changes nothing, a new reason keeps the time
// the wait began, and the wait's end removes it.
func TestCapacityPendingWrites(t *testing.T) {
	job := makeJob("j").replicas(Worker, 1, Never).started(ago(time.Minute)).condition(kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, ago(30*time.Second)).obj()
	pod := waitingPod(job, Worker, 0, noBatchCPU)
	pass := func(job *kubeflowv1.TFJob, s reclaim.Supply, at time.Time, pods ...*corev1.Pod) *kubeflowv1.TFJob {
		obs := observe(job, pods...)
		obs.supply = &s
		p := planPass(job, obs, at, defaultPolicy)
		next := job.DeepCopy()
		next.Status = p.status
		return next
	}
	unavailable := reclaim.Supply{Decided: true, Reason: reclaim.ReasonUsageSourceUnavailable, Message: "the source fails"}

	first := pass(job, unavailable, testNow, pod)
	if got := summariseStatus(first.Status).Conditions; len(got) != 3 || got[0] != "CapacityPending=True/UsageSourceUnavailable" || got[2] != "Running=True/TFJobRunning" {
		t.Fatalf("conditions %v: want CapacityPending first, Running still last", got)
	}
	if again := pass(first, unavailable, testNow.Add(time.Minute), pod); !statusEqual(first.Status, again.Status) {
		t.Errorf("the same reason a minute later changed the status:\n%+v\n%+v", first.Status.Conditions, again.Status.Conditions)
	}
	warming := reclaim.Supply{Decided: true, Reason: reclaim.ReasonReclaimWarmingUp, Message: "the history is short"}
	second := pass(first, warming, testNow.Add(2*time.Minute), pod)
	c := findCondition(&second.Status, kubeflowv1.JobCapacityPending)
	if c.Reason != reclaim.ReasonReclaimWarmingUp || !c.LastTransitionTime.Time.Equal(testNow) || !c.LastUpdateTime.Time.Equal(testNow.Add(2*time.Minute)) {
		t.Errorf("condition %+v: want the new reason, waiting since %v, updated now", *c, testNow)
	}
	if done := pass(second, warming, testNow.Add(3*time.Minute), placed(pod)); findCondition(&done.Status, kubeflowv1.JobCapacityPending) != nil {
		t.Errorf("conditions %v once the pod is placed: want no CapacityPending", summariseStatus(done.Status).Conditions)
	}
}

// The cache keeps why the scheduler has not placed a pod until it is
// bound, and one copy of a message many pods share.
func TestSlimPodKeepsWhyUnscheduled(t *testing.T) {
	job := makeJob("j").replicas(Worker, 2, Never).obj()
	a, b := cached(waitingPod(job, Worker, 0, strings.Clone(noBatchCPU)), SlimPod), cached(waitingPod(job, Worker, 1, strings.Clone(noBatchCPU)), SlimPod)
	if !waitsForReclaimed(a) || !waitsForReclaimed(b) {
		t.Fatalf("slim pods %+v: want them still waiting for reclaimed capacity", a.Status.Conditions)
	}
	if ma, mb := a.Status.Conditions[0].Message, b.Status.Conditions[0].Message; unsafe.StringData(ma) != unsafe.StringData(mb) {
		t.Errorf("messages %q and %q: want one copy", ma, mb)
	}
	if slim := cached(placed(waitingPod(job, Worker, 0, noBatchCPU)), SlimPod); len(slim.Status.Conditions) != 0 {
		t.Errorf("conditions of a bound pod %+v: want none kept", slim.Status.Conditions)
	}
}

// res is milliCPU and gib GiB.
func res(milliCPU, gib int64) colocation.Resources {
	return colocation.Resources{MilliCPU: milliCPU, Memory: gib << 30}
}

// A job not yet started that asks for lent GPUs while no loan is long
// enough (LoanGate) creates nothing, says why on CapacityPending and asks
// again; once a loan is long enough it starts, and the condition goes.
func TestPlanWaitsForALongEnoughLoan(t *testing.T) {
	job := makeJob("j").replicas(Worker, 2, Never).obj()
	obs := observe(job)
	obs.loanWait, obs.loanRetry = "waits for a GPU loan long enough to reach a checkpoint: pool A100 lends its free GPUs only until 06:40", 30*time.Second
	p := planPass(job, obs, testNow, defaultPolicy)
	if diff := cmp.Diff([]string{"CapacityPending=True/GPULoanTooShort"}, summariseStatus(p.status).Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if c := findCondition(&p.status, kubeflowv1.JobCapacityPending); c == nil || !strings.Contains(c.Message, "TFJob ns/j waits for a GPU loan long enough") {
		t.Errorf("CapacityPending %+v: want the gate's words", c)
	}
	if len(p.createPods) != 0 || len(p.createServices) != 0 || p.status.StartTime != nil || p.requeueAfter != 30*time.Second {
		t.Errorf("Planned %d pods, %d services, startTime %v, requeue %v; want nothing started, asked again in 30s",
			len(p.createPods), len(p.createServices), p.status.StartTime, p.requeueAfter)
	}

	job.Status = p.status
	admitted := planPass(job, observe(job), testNow.Add(time.Minute), defaultPolicy)
	if diff := cmp.Diff([]string{"Created=True/TFJobCreated"}, summariseStatus(admitted.status).Conditions); diff != "" || len(admitted.createPods) != 2 {
		t.Errorf("Once a loan is long enough: %d pods planned, conditions (-want +got):\n%s", len(admitted.createPods), diff)
	}
}
