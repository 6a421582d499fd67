//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/test/framework"
)

// The co-location suite: training runs as offline work beside online
// services on the local cluster's real kube-scheduler, and yields to them.
// Each test starts its own small cluster (the machine runs one at a time).

const (
	// offlineClass is the PriorityClass backfill gives training pods that
	// name none.
	offlineClass = "backfill-offline"
	// offlinePriority is its value: below the 0 of pods with no class.
	offlinePriority int32 = -100
	// offlineGrace is the termination grace period of training pods whose
	// template sets none: time to save a checkpoint.
	offlineGrace int64 = 60

	trainingNS = "ml"
	onlineNS   = "online"

	// Disruption reasons Kubernetes writes on DisruptionTarget, which the
	// operator repeats on the job's Restarting condition and its events.
	reasonPreemption = "PreemptionByScheduler"
	reasonEviction   = "EvictionByEvictionAPI"
)

// oneCPUNode is a cluster of a single 4-core node, so that two pods of 2
// cores fill it.
var oneCPUNode = []string{"--cpu-nodes=1", "--gpu-nodes=0", "--node-cpu=4", "--node-memory=16Gi"}

// On requested capacity (a job that opts out of reclaimed capacity), an
// online service that needs the room takes it: the real scheduler
// preempts the training pods (their class ranks below every pod without
// one), the operator recreates them without failing the job or charging
// backoffLimit, even under restartPolicy Never and backoffLimit 0, they
// wait Pending while online holds the node, and the job completes once
// online gives the room back.
func TestColocationOnlinePreemptsOffline(t *testing.T) {
	dc := startCluster(t, oneCPUNode...)
	c := dc.client
	checkOfflinePriorityClass(t, c)
	createNamespace(t, c, trainingNS)
	createNamespace(t, c, onlineNS)

	web := makeOnline(onlineNS, "web", 0, "2")
	create(t, c, web)
	createTFJob(t, c, makeTFJob(trainingNS, "resnet").OnRequestedCapacity().Workers(2).CPU("2").BackoffLimit(0).SimDuration("40s").Obj())
	waitFor(t, 30*time.Second, "both Workers running, filling the node", podsRunning(c, trainingNS, "resnet", 2))
	first := checkOfflinePods(t, c, trainingNS, "resnet", offlineClass)

	scaleDeployment(t, c, web, 2)
	waitFor(t, time.Minute, "the online pods to preempt the training", func(ctx context.Context) (bool, string, error) {
		job, err := getJob(ctx, c, trainingNS, "resnet")
		if err != nil {
			return false, err.Error(), nil
		}
		if isFailed(job) {
			return false, describeJob(job), fmt.Errorf("the preempted TFJob failed")
		}
		online, err := listPods(ctx, c, onlineNS, client.MatchingLabels{"app": "web"})
		if err != nil {
			return false, err.Error(), nil
		}
		training, err := jobPods(ctx, c, trainingNS, "resnet")
		if err != nil {
			return false, err.Error(), nil
		}
		seen := describeJob(job) + "; online: " + describePods(online) + "; training: " + describePods(training)
		last := lastCondition(job)
		return countRunning(online) == 2 && len(training) == 2 && countBound(training) == 0 &&
			last.Type == kubeflowv1.JobRestarting && last.Reason == reasonPreemption && job.Status.Disruptions >= 1, seen, nil
	})
	waitFor(t, 15*time.Second, "a Warning event "+reasonPreemption+" on the TFJob", eventSeen(c, trainingNS, "resnet", corev1.EventTypeWarning, reasonPreemption))
	for _, uid := range first {
		if h, _ := dc.observer.podHistoryOf(uid); h.disruption != reasonPreemption {
			t.Errorf("Preempted pod %s: DisruptionTarget reason %q, want %s", h, h.disruption, reasonPreemption)
		}
	}

	scaleDeployment(t, c, web, 0)
	waitFor(t, 30*time.Second, "the Workers to run again once online left", podsRunning(c, trainingNS, "resnet", 2))
	waitFor(t, 75*time.Second, "TFJob resnet to succeed", jobSucceeds(c, trainingNS, "resnet"))
	checkOnlyDisrupted(t, dc, trainingNS, "resnet", 1)
}

// The trap the seed sets, for jobs on requested capacity (reclaimed
// capacity does not compete with online pods' requests at all): its
// PriorityClass for offline training
// (examples/priorityclass-offline-training.yaml) has value 100, but pods
// without a PriorityClass, which is how most online services run, have
// priority 0. "Offline" training then outranks online work, and the real
// scheduler evicts the online service to make room for training: the
// opposite of co-location. The same job left to backfill's default
// (backfill-offline, -100, preemptionPolicy Never) waits Pending and leaves
// the online pods alone. `backfill doctor` is meant to flag the first.
func TestColocationPriorityClassInversion(t *testing.T) {
	dc := startCluster(t, oneCPUNode...)
	c := dc.client
	applyExamplePriorityClass(t, c)
	createNamespace(t, c, trainingNS)
	createNamespace(t, c, onlineNS)

	create(t, c, makeOnline(onlineNS, "web", 2, "2"))
	var onlineUIDs []types.UID
	waitFor(t, 30*time.Second, "the online service filling the node", func(ctx context.Context) (bool, string, error) {
		pods, err := listPods(ctx, c, onlineNS, client.MatchingLabels{"app": "web"})
		if err != nil {
			return false, err.Error(), nil
		}
		onlineUIDs = uidsOf(pods)
		return countRunning(pods) == 2, describePods(pods), nil
	})

	training := func(name string) *tfJobWrapper {
		return makeTFJob(trainingNS, name).OnRequestedCapacity().Workers(2).CPU("2").SimDuration("10m")
	}
	createTFJob(t, c, training("polite").Obj())
	waitFor(t, 45*time.Second, "the scheduler to leave the default-class training Pending", func(ctx context.Context) (bool, string, error) {
		pods, err := jobPods(ctx, c, trainingNS, "polite")
		if err != nil {
			return false, err.Error(), nil
		}
		tried := 0
		for i := range pods {
			if _, ok := podScheduledFalse(&pods[i]); ok {
				tried++
			}
		}
		return len(pods) == 2 && tried == 2 && countBound(pods) == 0, describePods(pods), nil
	})
	checkOfflinePods(t, c, trainingNS, "polite", offlineClass)
	// The scheduler decides on preemption in the cycle that finds no room:
	// a pod it means to preempt for is nominated to the node.
	for _, p := range mustJobPods(t, c, trainingNS, "polite") {
		if p.Status.NominatedNodeName != "" {
			t.Errorf("Pod %s of the default-class job is nominated to %s: the scheduler preempts for it", p.Name, p.Status.NominatedNodeName)
		}
	}
	checkOnlineUntouched(t, dc, onlineUIDs)

	// The same job, with the seed's priorityClassName in its template.
	createTFJob(t, c, training("inverted").TemplatePriorityClass("offline-training").Obj())
	waitFor(t, time.Minute, "the value-100 training to take the node from the online service", func(ctx context.Context) (bool, string, error) {
		inverted, err := jobPods(ctx, c, trainingNS, "inverted")
		if err != nil {
			return false, err.Error(), nil
		}
		online, err := listPods(ctx, c, onlineNS, client.MatchingLabels{"app": "web"})
		if err != nil {
			return false, err.Error(), nil
		}
		seen := "training: " + describePods(inverted) + "; online: " + describePods(online)
		return countRunning(inverted) == 2 && countRunning(online) == 0, seen, nil
	})
	ctx := context.Background()
	for _, uid := range onlineUIDs {
		h, _ := dc.observer.podHistoryOf(uid)
		events, _ := findEvents(ctx, c, onlineNS, h.name, "Preempted")
		if h.disruption != reasonPreemption && len(events) == 0 {
			t.Errorf("Online pod %s was not preempted (no DisruptionTarget %s, no Preempted event)", h, reasonPreemption)
		}
	}
	online, err := listPods(ctx, c, onlineNS, client.MatchingLabels{"app": "web"})
	if err != nil {
		t.Fatal(err)
	}
	if countBound(online) != 0 {
		t.Errorf("Online pods after the inversion: %s; want the replacements Pending", describePods(online))
	}
	for _, p := range mustJobPods(t, c, trainingNS, "inverted") {
		if p.Spec.PriorityClassName != "offline-training" || p.Spec.Priority == nil || *p.Spec.Priority != 100 {
			t.Errorf("Pod %s: want priorityClassName offline-training and priority 100 from the template", describePod(&p))
		}
	}
	if pods := mustJobPods(t, c, trainingNS, "polite"); countBound(pods) != 0 {
		t.Errorf("The default-class job took room it must wait for: %s", describePods(pods))
	}
}

// `kubectl drain` evicts the training pods of a node through the Eviction
// API; the operator recreates them on another node without charging
// backoffLimit, under restartPolicy Never and backoffLimit 0, and the job
// completes.
func TestColocationDrain(t *testing.T) {
	dc := startCluster(t, "--cpu-nodes=2", "--gpu-nodes=0", "--node-cpu=4", "--node-memory=16Gi")
	c := dc.client
	createNamespace(t, c, trainingNS)

	createTFJob(t, c, makeTFJob(trainingNS, "drained").Workers(2).CPU("1").BackoffLimit(0).SimDuration("40s").Obj())
	waitFor(t, 30*time.Second, "both Workers running", podsRunning(c, trainingNS, "drained", 2))
	pods := mustJobPods(t, c, trainingNS, "drained")
	// Worker 0 decides success: drain its node, so that the job can only
	// succeed through the recreated pod.
	node := pods[0].Spec.NodeName
	var evicted []types.UID
	for _, p := range pods {
		if p.Spec.NodeName == node {
			evicted = append(evicted, p.UID)
		}
	}

	drain := exec.Command(filepath.Join(framework.BinDir(), "kubectl"), "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=60s")
	drain.Env = append(os.Environ(), "KUBECONFIG="+dc.state.Kubeconfig)
	started := time.Now()
	out, err := drain.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl drain %s: %v\n%s", node, err, out)
	}
	t.Logf("kubectl drain %s took %v:\n%s", node, time.Since(started).Round(100*time.Millisecond), out)

	waitFor(t, 30*time.Second, "the evicted Workers to run on another node", func(ctx context.Context) (bool, string, error) {
		done, seen, err := podsRunning(c, trainingNS, "drained", 2)(ctx)
		if !done || err != nil {
			return false, seen, err
		}
		pods, err := jobPods(ctx, c, trainingNS, "drained")
		if err != nil {
			return false, err.Error(), nil
		}
		for _, p := range pods {
			if p.Spec.NodeName == node || slices.Contains(evicted, p.UID) {
				return false, seen, nil
			}
		}
		return true, seen, nil
	})
	waitFor(t, 15*time.Second, "a Warning event "+reasonEviction+" on the TFJob", eventSeen(c, trainingNS, "drained", corev1.EventTypeWarning, reasonEviction))
	if conds := dc.observer.jobConditions(trainingNS, "drained"); !slices.Contains(conds, "Restarting=True/"+reasonEviction) {
		t.Errorf("TFJob drained showed conditions %v; want Restarting=True/%s among them", conds, reasonEviction)
	}
	for _, uid := range evicted {
		if h, _ := dc.observer.podHistoryOf(uid); h.disruption != reasonEviction {
			t.Errorf("Evicted pod %s: DisruptionTarget reason %q, want %s", h, h.disruption, reasonEviction)
		}
	}
	waitFor(t, 75*time.Second, "TFJob drained to succeed", jobSucceeds(c, trainingNS, "drained"))
	checkOnlyDisrupted(t, dc, trainingNS, "drained", len(evicted))
}

// Gang start. Two distributed jobs of 4 Workers × 1 GPU on one node of 6
// GPUs: under gang scheduling (the default of `backfill dev`) one job
// starts whole and the other waits with no pod bound, then starts whole
// when the first is done; without it, the scheduler hands GPUs to both,
// and a half-started job sits on GPUs it cannot use (3+3 is the deadlock:
// neither job can ever run).
func TestColocationGang(t *testing.T) {
	gpuNode := []string{"--cpu-nodes=0", "--gpu-nodes=1", "--gpus-per-node=6", "--node-cpu=16", "--node-memory=64Gi"}
	jobs := []string{"gang-a", "gang-b"}
	// Both jobs are created at once, as a queue that admits them would.
	createJobs := func(t *testing.T, c client.Client) {
		want := map[string]map[string]map[string]string{}
		for _, name := range jobs {
			job := makeTFJob(trainingNS, name).Workers(4).GPUs(1).SimDuration("30s").Obj()
			want[name] = templateAnnotations(job)
			create(t, c, job)
		}
		for _, name := range jobs {
			checkTemplateAnnotations(t, c, trainingNS, name, want[name])
		}
	}

	t.Run("gang", func(t *testing.T) {
		dc := startCluster(t, gpuNode...)
		c := dc.client
		createNamespace(t, c, trainingNS)
		createJobs(t, c)
		whole := func(x []corev1.Pod) bool { return len(x) == 4 && countRunning(x) == 4 }
		waiting := func(x []corev1.Pod) bool { return len(x) == 4 && countBound(x) == 0 && anyTried(x) }
		second := ""
		waitFor(t, time.Minute, "one job running whole and the other waiting with no pod bound", func(ctx context.Context) (bool, string, error) {
			a, b, seen := gangPods(ctx, c, jobs)
			if together := dc.observer.jobsTogether(); len(together) > 0 {
				return false, seen, fmt.Errorf("both jobs held GPUs at once: %v", together)
			}
			switch {
			case whole(a) && waiting(b):
				second = jobs[1]
			case whole(b) && waiting(a):
				second = jobs[0]
			}
			return second != "", seen, nil
		})
		for _, name := range jobs {
			checkPodGroup(t, c, trainingNS, name, 4)
		}
		// The first job's training ends after 30 s and frees its GPUs.
		waitFor(t, 75*time.Second, "the waiting job "+second+" to start whole once the first is done", podsRunning(c, trainingNS, second, 4))
	})

	t.Run("no gang", func(t *testing.T) {
		dc := startCluster(t, append(gpuNode, "--gang=false")...)
		c := dc.client
		createNamespace(t, c, trainingNS)
		createJobs(t, c)
		var a, b []corev1.Pod
		waitFor(t, 90*time.Second, "all 6 GPUs handed out and the other pods left Pending", func(ctx context.Context) (bool, string, error) {
			var seen string
			a, b, seen = gangPods(ctx, c, jobs)
			all := append(slices.Clone(a), b...)
			pendingTried := 0
			for i := range all {
				if _, ok := podScheduledFalse(&all[i]); ok && all[i].Spec.NodeName == "" {
					pendingTried++
				}
			}
			return len(all) == 8 && countBound(all) == 6 && pendingTried == 2, seen, nil
		})
		t.Logf("Without gang the GPUs were split %d+%d", countBound(a), countBound(b))
		half := func(x []corev1.Pod) bool { return countBound(x) > 0 && countBound(x) < 4 }
		if !half(a) && !half(b) {
			t.Errorf("Without gang, no job sits half-started on GPUs: %s bound %d, %s bound %d", jobs[0], countBound(a), jobs[1], countBound(b))
		}
		for _, name := range jobs {
			waitFor(t, 15*time.Second, "a Warning event GangSchedulingUnavailable on "+name, eventSeen(c, trainingNS, name, corev1.EventTypeWarning, "GangSchedulingUnavailable"))
			for _, p := range mustJobPods(t, c, trainingNS, name) {
				if p.Spec.SchedulingGroup != nil {
					t.Errorf("Pod %s has schedulingGroup %+v without gang scheduling", p.Name, p.Spec.SchedulingGroup)
				}
			}
			err := c.Get(context.Background(), client.ObjectKey{Namespace: trainingNS, Name: name}, podGroupObject())
			if err == nil {
				t.Errorf("TFJob %s got a PodGroup with --gang=false", name)
			} else if ignoreNotFound(err) != nil && !meta.IsNoMatchError(err) {
				t.Errorf("Reading the PodGroup of %s: %v", name, err)
			}
		}
	})
}

// A replica that really fails still fails the job under restartPolicy
// Never: disruption handling must not turn every failure into a restart.
func TestColocationRealFailureFails(t *testing.T) {
	dc := startCluster(t, oneCPUNode...)
	c := dc.client
	createNamespace(t, c, trainingNS)

	createTFJob(t, c, makeTFJob(trainingNS, "crash").SimDuration("3s").SimExitCode("1").Obj())
	waitFor(t, time.Minute, "TFJob crash to fail", func(ctx context.Context) (bool, string, error) {
		job, err := getJob(ctx, c, trainingNS, "crash")
		if err != nil {
			return false, err.Error(), nil
		}
		last := lastCondition(job)
		if last.Type == kubeflowv1.JobSucceeded {
			return false, describeJob(job), fmt.Errorf("a job whose worker exits 1 succeeded")
		}
		return last.Type == kubeflowv1.JobFailed && last.Status == corev1.ConditionTrue, describeJob(job), nil
	})
	job, err := getJob(context.Background(), c, trainingNS, "crash")
	if err != nil {
		t.Fatal(err)
	}
	if last := lastCondition(job); last.Reason != "TFJobFailed" {
		t.Errorf("Failed condition reason %q (%s), want TFJobFailed", last.Reason, last.Message)
	}
	if job.Status.Disruptions != 0 || job.Status.Restarts != 0 {
		t.Errorf("TFJob crash: restarts %d, disruptions %d; want 0 and 0", job.Status.Restarts, job.Status.Disruptions)
	}
	for _, cond := range dc.observer.jobConditions(trainingNS, "crash") {
		if strings.HasPrefix(cond, string(kubeflowv1.JobRestarting)+"=") {
			t.Errorf("TFJob crash showed %s; a real failure under Never is no restart", cond)
		}
	}
	waitFor(t, 15*time.Second, "a Warning event TFJobFailed", eventSeen(c, trainingNS, "crash", corev1.EventTypeWarning, "TFJobFailed"))
	for _, h := range dc.observer.podsWith(trainingNS, kubeflowv1.JobNameLabel, "crash") {
		if h.disruption != "" {
			t.Errorf("Pod %s was disrupted; it should simply have failed", h)
		}
	}
	if pods := dc.observer.podsWith(trainingNS, kubeflowv1.JobNameLabel, "crash"); len(pods) != 1 {
		t.Errorf("TFJob crash had %d pods, want 1 (no restart): %v", len(pods), pods)
	}
}

// A TFJob naming a PriorityClass that does not exist, in
// runPolicy.schedulingPolicy.priorityClass or in its pod template, is not
// started: it says why in its Created condition and an event, and creates
// no pod (the apiserver would refuse every one). Once the class exists the
// job starts.
func TestColocationMissingPriorityClass(t *testing.T) {
	dc := startCluster(t, oneCPUNode...)
	c := dc.client
	createNamespace(t, c, trainingNS)

	jobs := map[string]*kubeflowv1.TFJob{
		"in-policy":   makeTFJob(trainingNS, "in-policy").SchedulingPriorityClass("no-such-class").SimDuration("10m").Obj(),
		"in-template": makeTFJob(trainingNS, "in-template").TemplatePriorityClass("no-such-class").SimDuration("10m").Obj(),
	}
	for _, job := range jobs {
		create(t, c, job)
	}
	for name := range jobs {
		waitFor(t, 30*time.Second, "TFJob "+name+" to be refused with PriorityClassNotFound", func(ctx context.Context) (bool, string, error) {
			job, err := getJob(ctx, c, trainingNS, name)
			if err != nil {
				return false, err.Error(), nil
			}
			created := findCondition(job, kubeflowv1.JobCreated)
			return created != nil && created.Status == corev1.ConditionFalse && created.Reason == "PriorityClassNotFound", describeJob(job), nil
		})
		waitFor(t, 15*time.Second, "a Warning event PriorityClassNotFound on "+name, eventSeen(c, trainingNS, name, corev1.EventTypeWarning, "PriorityClassNotFound"))
	}
	for name := range jobs {
		if pods := mustJobPods(t, c, trainingNS, name); len(pods) != 0 {
			t.Errorf("TFJob %s with a missing PriorityClass has pods: %s", name, describePods(pods))
		}
		if seen := dc.observer.podsWith(trainingNS, kubeflowv1.JobNameLabel, name); len(seen) != 0 {
			t.Errorf("TFJob %s with a missing PriorityClass had pods: %v", name, seen)
		}
	}

	create(t, c, &schedulingv1.PriorityClass{
		ObjectMeta:       metav1.ObjectMeta{Name: "no-such-class"},
		Value:            -50,
		PreemptionPolicy: ptr.To(corev1.PreemptNever),
	})
	// The class is below zero, so the pods run on reclaimed capacity, which
	// grows on a young cluster at a bounded rate (--reclaim-growth-per-minute):
	// the second pod may wait a pass or two for it.
	for name := range jobs {
		waitFor(t, 2*time.Minute, "TFJob "+name+" to start once its PriorityClass exists", podsRunning(c, trainingNS, name, 1))
		job, err := getJob(context.Background(), c, trainingNS, name)
		if err != nil {
			t.Fatal(err)
		}
		if created := findCondition(job, kubeflowv1.JobCreated); created == nil || created.Status != corev1.ConditionTrue {
			t.Errorf("TFJob %s runs but is not Created=True: %s", name, describeJob(job))
		}
	}
}

// checkOfflinePriorityClass: the manager created backfill's offline class,
// below every pod without a class, never preempting, and not the default
// of every pod (online pods would sink with it).
func checkOfflinePriorityClass(t *testing.T, c client.Client) {
	t.Helper()
	pc := &schedulingv1.PriorityClass{}
	waitFor(t, 30*time.Second, "PriorityClass "+offlineClass, func(ctx context.Context) (bool, string, error) {
		err := c.Get(ctx, client.ObjectKey{Name: offlineClass}, pc)
		if err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
	if pc.Value != offlinePriority || pc.PreemptionPolicy == nil || *pc.PreemptionPolicy != corev1.PreemptNever || pc.GlobalDefault {
		t.Errorf("PriorityClass %s: value %d, preemptionPolicy %v, globalDefault %v; want %d, Never, false",
			offlineClass, pc.Value, ptr.Deref(pc.PreemptionPolicy, ""), pc.GlobalDefault, offlinePriority)
	}
}

// checkOfflinePods: every pod of the job has the PriorityClass and the
// grace period backfill gives offline work. It returns the pods' UIDs.
func checkOfflinePods(t *testing.T, c client.Client, ns, job, class string) []types.UID {
	t.Helper()
	pods := mustJobPods(t, c, ns, job)
	for _, p := range pods {
		if p.Spec.PriorityClassName != class {
			t.Errorf("Pod %s: priorityClassName %q, want %q", p.Name, p.Spec.PriorityClassName, class)
		}
		if class == offlineClass && (p.Spec.Priority == nil || *p.Spec.Priority != offlinePriority) {
			t.Errorf("Pod %s: priority %v, want %d", p.Name, ptr.Deref(p.Spec.Priority, 0), offlinePriority)
		}
		if g := p.Spec.TerminationGracePeriodSeconds; g == nil || *g != offlineGrace {
			t.Errorf("Pod %s: terminationGracePeriodSeconds %v, want %d", p.Name, ptr.Deref(g, 0), offlineGrace)
		}
	}
	return uidsOf(pods)
}

// checkOnlyDisrupted: the job never failed, nothing was charged to
// backoffLimit, and at least min disruptions were counted.
func checkOnlyDisrupted(t *testing.T, dc *devCluster, ns, name string, min int) {
	t.Helper()
	job, err := getJob(context.Background(), dc.client, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if job.Status.Restarts != 0 || dc.observer.jobMaxRestarts(ns, name) != 0 {
		t.Errorf("TFJob %s: restarts %d (at most %d seen), want 0: disruptions are not charged to backoffLimit", name, job.Status.Restarts, dc.observer.jobMaxRestarts(ns, name))
	}
	if int(job.Status.Disruptions) < min {
		t.Errorf("TFJob %s: disruptions %d, want at least %d", name, job.Status.Disruptions, min)
	}
	if dc.observer.jobEverFailed(ns, name) {
		t.Errorf("TFJob %s was Failed at some point: %v", name, dc.observer.jobConditions(ns, name))
	}
}

// checkOnlineUntouched: the online pods still run, the same ones, and none
// was ever marked for disruption.
func checkOnlineUntouched(t *testing.T, dc *devCluster, uids []types.UID) {
	t.Helper()
	for _, uid := range uids {
		h, ok := dc.observer.podHistoryOf(uid)
		if !ok || h.gone || h.disruption != "" || h.phase != corev1.PodRunning {
			t.Errorf("Online pod %s was disturbed by offline training", h)
		}
		if events, _ := findEvents(context.Background(), dc.client, onlineNS, h.name, "Preempted"); len(events) > 0 {
			t.Errorf("Online pod %s was preempted: %s", h.name, events[0].Note)
		}
	}
}

// checkPodGroup: the job has a PodGroup of its name whose gang needs
// minCount pods, and its pods belong to it.
func checkPodGroup(t *testing.T, c client.Client, ns, name string, minCount int64) {
	t.Helper()
	pg := podGroupObject()
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pg); err != nil {
		t.Errorf("PodGroup %s/%s: %v", ns, name, err)
	} else if got, found, _ := unstructured.NestedInt64(pg.Object, "spec", "schedulingPolicy", "gang", "minCount"); !found || got != minCount {
		t.Errorf("PodGroup %s/%s: spec.schedulingPolicy %v, want gang.minCount %d", ns, name, pg.Object["spec"], minCount)
	}
	for _, p := range mustJobPods(t, c, ns, name) {
		if g := p.Spec.SchedulingGroup; g == nil || ptr.Deref(g.PodGroupName, "") != name {
			t.Errorf("Pod %s: schedulingGroup %+v, want podGroupName %s", p.Name, g, name)
		}
	}
}

// podGroupObject is an empty scheduling.k8s.io/v1beta1 PodGroup.
func podGroupObject() *unstructured.Unstructured {
	pg := &unstructured.Unstructured{}
	pg.SetGroupVersionKind(schema.GroupVersionKind{Group: "scheduling.k8s.io", Version: "v1beta1", Kind: "PodGroup"})
	return pg
}

// gangPods are the pods of the two jobs, and what they look like.
func gangPods(ctx context.Context, c client.Client, jobs []string) (a, b []corev1.Pod, seen string) {
	a, errA := jobPods(ctx, c, trainingNS, jobs[0])
	b, errB := jobPods(ctx, c, trainingNS, jobs[1])
	if errA != nil || errB != nil {
		return nil, nil, fmt.Sprint(errA, errB)
	}
	return a, b, fmt.Sprintf("%s: %s; %s: %s", jobs[0], describePods(a), jobs[1], describePods(b))
}

// applyExamplePriorityClass creates the seed's PriorityClass, unchanged.
func applyExamplePriorityClass(t *testing.T, c client.Client) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(framework.ExamplesDir(), "priorityclass-offline-training.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pc := &schedulingv1.PriorityClass{}
	if err := yaml.UnmarshalStrict(data, pc); err != nil {
		t.Fatalf("Decoding the example PriorityClass: %v", err)
	}
	if pc.Value != 100 {
		t.Fatalf("The example PriorityClass has value %d; this test is about the seed's 100", pc.Value)
	}
	create(t, c, pc)
}

// scaleDeployment sets a Deployment's replicas.
func scaleDeployment(t *testing.T, c client.Client, d *appsv1.Deployment, replicas int32) {
	t.Helper()
	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas))
	if err := c.Patch(context.Background(), d, patch); err != nil {
		t.Fatalf("Scaling %s to %d: %v", d.Name, replicas, err)
	}
}

func mustJobPods(t *testing.T, c client.Client, ns, job string) []corev1.Pod {
	t.Helper()
	pods, err := jobPods(context.Background(), c, ns, job)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

func uidsOf(pods []corev1.Pod) []types.UID {
	var uids []types.UID
	for _, p := range pods {
		uids = append(uids, p.UID)
	}
	return uids
}

// countRunning counts the pods Running and not being deleted.
func countRunning(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// countBound counts the pods bound to a node.
func countBound(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

// anyTried reports whether the scheduler tried a pod and found no room.
func anyTried(pods []corev1.Pod) bool {
	for i := range pods {
		if _, ok := podScheduledFalse(&pods[i]); ok {
			return true
		}
	}
	return false
}
