//go:build integration

package reclaim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// settled is how long the manager needs to see a change of use: a rate
// window, a few scrapes and decisions.
const settled = time.Minute

// TestTrainingRunsInReclaimedCapacity: a node whose CPU online pods request
// whole runs no training by priority alone. Reclaimed capacity gives the
// idle CPU to a TFJob; when online use rises, just enough of its pods are
// evicted, online pods untouched, the job restarting but not failed; when
// use falls, its pods return and it succeeds.
func TestTrainingRunsInReclaimedCapacity(t *testing.T) {
	dumpOnFailure(t)
	node := nodeNames[0]
	eventually(t, settled, "node "+node+" to publish its idle CPU", func(ctx context.Context) (bool, string, error) {
		return publishesIdleCPU(ctx, node)
	})

	const workers, cpu = 4, "3"
	job := trainingJob("train", node, workers, cpu, 40*time.Second)
	if err := apiServer.Client.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	eventually(t, settled, "the job's pods to run on "+node, func(ctx context.Context) (bool, string, error) {
		pods, err := jobPods(ctx, job.Name)
		return running(pods, node) == workers, fmt.Sprintf("%d of %d running", running(pods, node), workers), err
	})
	checkOnReclaimedCapacity(t, job.Name)
	before := onlinePods(t, node)
	evicted := map[string]string{"resource": "cpu", "result": "evicted"}
	reclaimedDisruptions := map[string]string{"reason": colocation.ReasonReclaimedForOnline}
	evictedBefore, disruptedBefore := counter(t, "backfill_reclaim_evictions_total", evicted), counter(t, "backfill_disruptions_total", reclaimedDisruptions)

	// Online pods now use 2.5 CPU each: 10 of the node's 16, leaving 4.4
	// for training that holds 12.
	setOnlineUse(t, node, "2500m")
	var e reclaim.Explanation
	eventually(t, settled, "offline pods to be evicted down to the new target", func(ctx context.Context) (bool, string, error) {
		pods, err := jobPods(ctx, job.Name)
		if err != nil {
			return false, "", err
		}
		e, _, err = explanation(ctx, node)
		return running(pods, node) == 1 && e.OnlinePeak.MilliCPU >= 9900, fmt.Sprintf("%d running, %+v", running(pods, node), e), err
	})
	// Just enough: what still runs fits the target, and one pod fewer
	// evicted would not have.
	if held := int64(3000); held > e.Target.MilliCPU || held+3000 <= e.Target.MilliCPU {
		t.Errorf("after evictions offline pods hold %dm against a target of %dm: not just enough", held, e.Target.MilliCPU)
	}
	throughout(t, 5*time.Second, "one pod running and no further eviction", func(ctx context.Context) (bool, string, error) {
		pods, err := jobPods(ctx, job.Name)
		return running(pods, node) == 1, fmt.Sprintf("%d running", running(pods, node)), err
	})
	checkOnlineUntouched(t, node, before)
	// Evictions the manager made, and disruptions the operator counted for
	// them; kwok may add others of its own (it deletes pods by name).
	if n := counter(t, "backfill_reclaim_evictions_total", evicted) - evictedBefore; n != workers-1 {
		t.Errorf("the manager evicted %v pods, want %d", n, workers-1)
	}
	eventually(t, 10*time.Second, "the evictions counted as disruptions", func(ctx context.Context) (bool, string, error) {
		n := counter(t, "backfill_disruptions_total", reclaimedDisruptions) - disruptedBefore
		return n == workers-1, fmt.Sprintf("%v %s disruptions", n, colocation.ReasonReclaimedForOnline), nil
	})
	got := &kubeflowv1.TFJob{}
	if err := apiServer.Client.Get(context.Background(), client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Disruptions < workers-1 || hasCondition(got, kubeflowv1.JobFailed) {
		t.Errorf("status = %+v, want at least %d disruptions and not Failed", got.Status, workers-1)
	}
	checkEvent(t, offlineNS, job.Name, colocation.ReasonReclaimedForOnline, workers-1)

	setOnlineUse(t, node, "500m")
	eventually(t, 3*time.Minute, "the job to succeed once online use fell", func(ctx context.Context) (bool, string, error) {
		err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(job), got)
		c := got.Status.Conditions
		return len(c) > 0 && c[len(c)-1].Type == kubeflowv1.JobSucceeded, fmt.Sprintf("%+v", c), err
	})
	checkOnlineUntouched(t, node, before)
}

// TestStaleUsageFreezes: with Prometheus stopped, usage goes stale: the
// node's reclaimed capacity freezes, and nothing is evicted even as online
// use rises; with Prometheus back it follows usage again.
func TestStaleUsageFreezes(t *testing.T) {
	dumpOnFailure(t)
	node := nodeNames[1]
	eventually(t, settled, "node "+node+" to publish its idle CPU", func(ctx context.Context) (bool, string, error) {
		return publishesIdleCPU(ctx, node)
	})
	job := trainingJob("long", node, 2, "3", time.Hour)
	if err := apiServer.Client.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apiServer.Client.Delete(context.Background(), job) })
	eventually(t, settled, "the job's pods to run", func(ctx context.Context) (bool, string, error) {
		pods, err := jobPods(ctx, job.Name)
		return running(pods, node) == 2, fmt.Sprintf("%d running", running(pods, node)), err
	})

	if err := prom.stop(); err != nil {
		t.Fatal(err)
	}
	var frozen int64
	eventually(t, settled, "the node to freeze", func(ctx context.Context) (bool, string, error) {
		e, published, err := explanation(ctx, node)
		frozen = published
		return e.State == reclaim.StateStale, fmt.Sprintf("%+v", e), err
	})
	checkNodeEvent(t, node, "ReclaimFrozen")

	// 3.5 CPU each: 14 of 16, far more than training could keep, but
	// nobody can tell while usage is stale.
	setOnlineUse(t, node, "3500m")
	throughout(t, 10*time.Second, "frozen: no eviction, no change", func(ctx context.Context) (bool, string, error) {
		pods, err := jobPods(ctx, job.Name)
		if err != nil {
			return false, "", err
		}
		e, published, err := explanation(ctx, node)
		return running(pods, node) == 2 && published == frozen && e.State == reclaim.StateStale,
			fmt.Sprintf("%d running, published %dm, %+v", running(pods, node), published, e), err
	})

	if err := prom.start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*settled, "usage current again, and the deficit evicted", func(ctx context.Context) (bool, string, error) {
		pods, err := jobPods(ctx, job.Name)
		if err != nil {
			return false, "", err
		}
		e, published, err := explanation(ctx, node)
		return e.State == reclaim.StateFresh && running(pods, node) == 0 && published < frozen,
			fmt.Sprintf("%d running, published %dm, %+v", running(pods, node), published, e), err
	})
	checkNodeEvent(t, node, "ReclaimResumed")
	setOnlineUse(t, node, "500m")
}

// checkOnReclaimedCapacity checks the job's pods ask for batch resources,
// not cpu or memory, keep what their template asked in an annotation, and
// are BestEffort.
func checkOnReclaimedCapacity(t *testing.T, job string) {
	t.Helper()
	pods, err := jobPods(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		r := p.Spec.Containers[0].Resources
		if q := r.Requests[corev1.ResourceCPU]; !q.IsZero() {
			t.Errorf("pod %s requests cpu %s: want 0, and batch-cpu instead", p.Name, q.String())
		}
		if got := r.Requests[colocation.ResourceBatchCPU]; got.Value() != 3000 {
			t.Errorf("pod %s requests batch-cpu %s, want 3000", p.Name, got.String())
		}
		if p.Annotations[colocation.OriginalResourcesAnnotation] == "" {
			t.Errorf("pod %s has no %s annotation", p.Name, colocation.OriginalResourcesAnnotation)
		}
		// The template's limits hold, with requests of 0.
		if p.Status.QOSClass != corev1.PodQOSBurstable {
			t.Errorf("pod %s is %s, want Burstable", p.Name, p.Status.QOSClass)
		}
	}
}

// checkOnlineUntouched checks node's online pods are the very ones seen
// before, running, and none was asked to stop.
func checkOnlineUntouched(t *testing.T, node string, before map[string]corev1.Pod) {
	t.Helper()
	now := onlinePods(t, node)
	for name, was := range before {
		p, ok := now[name]
		if !ok || p.UID != was.UID || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			t.Errorf("online pod %s was touched: before %s, now %+v", name, was.UID, p.Status)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.DisruptionTarget {
				t.Errorf("online pod %s has condition %+v", name, c)
			}
		}
	}
}

// checkEvent checks that the TFJob got want events of reason.
func checkEvent(t *testing.T, ns, name, reason string, want int) {
	t.Helper()
	var events eventsv1.EventList
	if err := apiServer.Client.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, e := range events.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			got += max(1, int(eventCount(e)))
		}
	}
	if got < want {
		t.Errorf("TFJob %s has %d %s event(s), want %d", name, got, reason, want)
	}
}

func eventCount(e eventsv1.Event) int32 {
	if e.Series != nil {
		return e.Series.Count
	}
	return 1
}

// checkNodeEvent waits for an event of reason on node.
func checkNodeEvent(t *testing.T, node, reason string) {
	t.Helper()
	eventually(t, 10*time.Second, reason+" event on node "+node, func(ctx context.Context) (bool, string, error) {
		var events eventsv1.EventList
		if err := apiServer.Client.List(ctx, &events); err != nil {
			return false, "", err
		}
		for _, e := range events.Items {
			if e.Regarding.Kind == "Node" && e.Regarding.Name == node && e.Reason == reason {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%d events", len(events.Items)), nil
	})
}

func hasCondition(job *kubeflowv1.TFJob, ctype kubeflowv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == ctype && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestTooLargeForAnyNode: a pod asking for more reclaimed CPU than any
// node could ever offer (16 CPU less the 10% margin) waits, and its TFJob
// is told why.
func TestTooLargeForAnyNode(t *testing.T) {
	dumpOnFailure(t)
	job := trainingJob("huge", nodeNames[0], 1, "15", time.Minute)
	if err := apiServer.Client.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apiServer.Client.Delete(context.Background(), job) })
	eventually(t, settled, "an ExceedsReclaimableCapacity event on the job", func(ctx context.Context) (bool, string, error) {
		var events eventsv1.EventList
		if err := apiServer.Client.List(ctx, &events, client.InNamespace(offlineNS)); err != nil {
			return false, "", err
		}
		for _, e := range events.Items {
			if e.Regarding.Name == job.Name && e.Reason == reclaim.ReasonExceedsReclaimableCapacity {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%d events", len(events.Items)), nil
	})
	pods, err := jobPods(context.Background(), job.Name)
	if err != nil || len(pods) != 1 || pods[0].Spec.NodeName != "" {
		t.Errorf("pods %v (%v): want one, unscheduled", len(pods), err)
	}
}

// TestPodDisruptionBudgetHolds: evictions go through the Eviction API, so a
// PodDisruptionBudget that allows none keeps the pods running; the node
// then keeps offering what they hold, and they are not marked as evicted.
func TestPodDisruptionBudgetHolds(t *testing.T) {
	dumpOnFailure(t)
	node := nodeNames[2]
	eventually(t, settled, "node "+node+" to publish its idle CPU", func(ctx context.Context) (bool, string, error) {
		return publishesIdleCPU(ctx, node)
	})
	ctx := context.Background()
	job := trainingJob("guarded", node, 2, "3", time.Hour)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: offlineNS, Name: "guarded"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(2)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{kubeflowv1.JobNameLabel: job.Name}},
		},
	}
	for _, obj := range []client.Object{pdb, job} {
		if err := apiServer.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = apiServer.Client.Delete(context.Background(), obj) })
	}
	eventually(t, settled, "the job's pods to run, guarded by the budget", func(ctx context.Context) (bool, string, error) {
		pods, err := jobPods(ctx, job.Name)
		if err != nil {
			return false, "", err
		}
		err = apiServer.Client.Get(ctx, client.ObjectKeyFromObject(pdb), pdb)
		return running(pods, node) == 2 && pdb.Status.CurrentHealthy == 2 && pdb.Status.DisruptionsAllowed == 0,
			fmt.Sprintf("%d running, budget %+v", running(pods, node), pdb.Status), err
	})

	refused := map[string]string{"resource": "cpu", "result": "refused"}
	before := counter(t, "backfill_reclaim_evictions_total", refused)
	setOnlineUse(t, node, "3500m")
	t.Cleanup(func() { setOnlineUse(t, node, "500m") })
	eventually(t, settled, "the Eviction API to refuse", func(ctx context.Context) (bool, string, error) {
		n := counter(t, "backfill_reclaim_evictions_total", refused) - before
		return n >= 1, fmt.Sprintf("%v refused", n), nil
	})
	throughout(t, 5*time.Second, "the pods running, the node offering what they hold", func(ctx context.Context) (bool, string, error) {
		pods, err := jobPods(ctx, job.Name)
		if err != nil {
			return false, "", err
		}
		_, published, err := explanation(ctx, node)
		marked := 0
		for _, p := range pods {
			if p.Annotations[colocation.StopReasonAnnotation] != "" {
				marked++
			}
		}
		return running(pods, node) == 2 && published >= 6000 && marked == 0,
			fmt.Sprintf("%d running, published %dm, %d marked evicted", running(pods, node), published, marked), err
	})
}

// TestCheckpointEndsTheNotice: a pod told to stop for online pods is
// evicted as soon as its job reports a checkpoint made after the notice,
// not at the notice's end: no more work is lost by waiting.
func TestCheckpointEndsTheNotice(t *testing.T) {
	dumpOnFailure(t)
	node := nodeNames[1]
	eventually(t, settled, "node "+node+" to publish its idle CPU", func(ctx context.Context) (bool, string, error) {
		return publishesIdleCPU(ctx, node)
	})
	ctx := context.Background()
	job := trainingJob("saver", node, 1, "3", time.Hour)
	pod := runOnePod(t, job, node)

	setOnlineUse(t, node, "3500m")
	t.Cleanup(func() { setOnlineUse(t, node, "500m") })
	var stopAt time.Time
	eventually(t, settled, "the stop notice on the pod", func(ctx context.Context) (bool, string, error) {
		err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(&pod), &pod)
		stopAt, _ = time.Parse(time.RFC3339, pod.Annotations[colocation.StopAtAnnotation])
		return pod.Annotations[colocation.StopReasonAnnotation] == colocation.ReasonReclaimedForOnline && !stopAt.IsZero(),
			fmt.Sprintf("annotations %v", pod.Annotations), err
	})
	throughout(t, 3*time.Second, "the pod running out its notice without a checkpoint", func(ctx context.Context) (bool, string, error) {
		err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(&pod), &pod)
		return pod.DeletionTimestamp == nil, fmt.Sprintf("deleting %v", pod.DeletionTimestamp), err
	})

	// The training code saves and reports it (what the report endpoint
	// writes, written here directly).
	saved := metav1.Now()
	patch := fmt.Sprintf(`{"status":{"progress":{"step":500,"reportTime":%q,"checkpointStep":500,"checkpointTime":%q}}}`,
		saved.UTC().Format(time.RFC3339), saved.UTC().Format(time.RFC3339))
	if err := apiServer.Client.Status().Patch(ctx, job, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	var evicted time.Time
	eventually(t, stopNotice, "the pod evicted after the checkpoint", func(ctx context.Context) (bool, string, error) {
		got := &corev1.Pod{}
		err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(&pod), got)
		// Gone, replaced or deleting (its deletionTimestamp is when its
		// grace period ends, not when it was evicted).
		if apierrors.IsNotFound(err) || (err == nil && (got.UID != pod.UID || got.DeletionTimestamp != nil)) {
			evicted = time.Now()
			return true, "", nil
		}
		return false, "still running", err
	})
	if !evicted.Before(stopAt) {
		t.Errorf("evicted at %v, not before the notice's end %v: the checkpoint did not end the notice", evicted, stopAt)
	}
}

// TestMemoryDoesNotWait: online pods short of memory get it without the
// notice CPU victims are given: memory kills online pods rather than
// slowing them.
func TestMemoryDoesNotWait(t *testing.T) {
	dumpOnFailure(t)
	node := nodeNames[2]
	eventually(t, settled, "node "+node+" to publish room for 36Gi", func(ctx context.Context) (bool, string, error) {
		n := &corev1.Node{}
		if err := apiServer.Client.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
			return false, "", err
		}
		e, _, err := reclaim.ReadExplanation(n.Annotations)
		memory := n.Status.Allocatable[colocation.ResourceBatchMemory]
		return memory.Cmp(resource.MustParse("36Gi")) >= 0 && e.State == reclaim.StateFresh, fmt.Sprintf("published %s, %+v", memory.String(), e), err
	})
	ctx := context.Background()
	job := trainingJob("memory-hog", node, 1, "1", time.Hour)
	tmpl := &job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template
	tmpl.Annotations[simkwok.UsageMemoryAnnotation] = "36Gi"
	res := &tmpl.Spec.Containers[0].Resources
	res.Requests[corev1.ResourceMemory], res.Limits[corev1.ResourceMemory] = resource.MustParse("36Gi"), resource.MustParse("36Gi")
	pod := runOnePod(t, job, node)

	// 4 × 7Gi online beside 36Gi of training leaves nothing of 64Gi.
	setOnlineMemory(t, node, "7Gi")
	t.Cleanup(func() { setOnlineMemory(t, node, "2Gi") })
	eventually(t, settled, "the pod evicted", func(ctx context.Context) (bool, string, error) {
		got := &corev1.Pod{}
		err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(&pod), got)
		if apierrors.IsNotFound(err) || (err == nil && got.UID != pod.UID) { // gone, or replaced
			return true, "", nil
		}
		return got.DeletionTimestamp != nil, fmt.Sprintf("annotations %v", got.Annotations), err
	})
	var events eventsv1.EventList
	if err := apiServer.Client.List(ctx, &events, client.InNamespace(offlineNS)); err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, e := range events.Items {
		if e.Regarding.Name == job.Name && e.Reason == colocation.ReasonReclaimedForOnline && e.Action == "Evict" {
			said = append(said, e.Note)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "now, without notice") {
		t.Errorf("The job's eviction events: %q, want one that says the pod goes now, without notice", said)
	}
}

// runOnePod creates a one-pod job, deleted when the test ends, and
// returns its pod once it runs on node.
func runOnePod(t *testing.T, job *kubeflowv1.TFJob, node string) corev1.Pod {
	t.Helper()
	if err := apiServer.Client.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apiServer.Client.Delete(context.Background(), job) })
	var pod corev1.Pod
	eventually(t, settled, "the job's pod to run", func(ctx context.Context) (bool, string, error) {
		pods, err := jobPods(ctx, job.Name)
		if len(pods) == 1 {
			pod = pods[0]
		}
		return running(pods, node) == 1, fmt.Sprintf("%d running", running(pods, node)), err
	})
	return pod
}
