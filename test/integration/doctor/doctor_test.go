//go:build integration

package doctor

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// TestDoctor walks doctor through a healthy state, then one crafted broken
// state after another, each in its own namespace. The healthy state comes
// first: the value-100 class of the last case is cluster-wide and would
// make every later run FAIL.
func TestDoctor(t *testing.T) {
	t.Run("healthy", testHealthy)
	t.Run("pending on GPUs", testPendingOnGPUs)
	t.Run("pending on a ResourceQuota", testPendingOnQuota)
	t.Run("refused by a LimitRange", testRefusedByLimitRange)
	t.Run("refused by a quota on cpu and memory", testRefusedByQuotaOnCPUAndMemory)
	t.Run("refused by Pod Security", testRefusedByPodSecurity)
	t.Run("missing PriorityClass", testMissingPriorityClass)
	t.Run("crash loop", testCrashLoop)
	t.Run("reclaimed capacity", testReclaimedCapacity)
	t.Run("node agent", testNodeAgent)
	// These leave pods that ask reclaimed CPU, which the case before
	// counts.
	t.Run("refused by a quota on reclaimed CPU", testRefusedByQuotaOnReclaimedCPU)
	t.Run("reclaimed pods in a namespace with a quota and a LimitRange", testReclaimedInQuotaNamespace)
	t.Run("value-100 PriorityClass", testValue100)
}

// A scheduled job, a leading manager, the offline class at -100: every
// check is OK, Prometheus and reclaim-usage (no reclaimed capacity yet)
// are said to be skipped, and doctor exits 0.
func testHealthy(t *testing.T) {
	ns := newNamespace(t, "healthy")
	create(t, makeJob(ns, "mnist", 2, quantities("cpu", "1", "memory", "1Gi")))
	waitFor(t, "both pods scheduled", podsAre(ns, "mnist", 2, scheduled))

	run := runDoctor(t, "-n", ns)
	t.Logf("doctor -n %s:\n%s", ns, run.stdout)
	if run.exitCode != 0 {
		t.Fatalf("exit code %d, want 0\nstderr: %s", run.exitCode, run.stderr)
	}
	lines := strings.Split(run.stdout, "\n")
	for _, check := range []string{"tfjob-crd", "tfjob-crd-match", "operator", "other-tfjob-controller", "kueue-integration", "kueue-waiting", "priority-class-missing", "pending-resources", "resource-quota", "limit-range", "pod-create", "offline-priority", "gpu-nodes", "node-agent", "online-signal", "crash-loop"} {
		if !hasLine(lines, "OK", check) {
			t.Errorf("no OK line for %s", check)
		}
	}
	if !hasLine(lines, "SKIP", "prometheus") {
		t.Error("no line saying the Prometheus checks were skipped")
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "WARN") {
			t.Errorf("unexpected finding on a healthy cluster: %s", l)
		}
	}
	if !strings.Contains(run.stdout, "renewed Lease backfill-system/backfill-manager") {
		t.Error("the operator check does not name the manager's Lease")
	}
	// The suite's manager runs without --reclaim: no node is explained.
	if !hasLine(lines, "SKIP", "reclaim-usage") {
		t.Error("no line saying reclaim-usage was skipped without reclaimed capacity")
	}

	r := doctorJSON(t, 0, "mnist", "-n", ns)
	if r.Failed || r.Summary["FAIL"] != 0 || r.Summary["WARN"] != 0 || r.Summary["SKIP"] != 2 {
		t.Errorf("JSON summary %v failed=%v, want no FAIL or WARN and two SKIPs (prometheus, reclaim-usage)", r.Summary, r.Failed)
	}
	r.mustFind(t, "reclaim-usage", "SKIP", "", "no node has a reclaimed-capacity explanation", "reclaim is off")
}

// hasLine reports whether a text line starts with the status and check.
func hasLine(lines []string, status, check string) bool {
	for _, l := range lines {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == status && f[1] == check {
			return true
		}
	}
	return false
}

// A pod asking for more GPUs than any node has stays Pending with the
// scheduler's "Insufficient nvidia.com/gpu"; doctor gives the numbers.
func testPendingOnGPUs(t *testing.T) {
	ns := newNamespace(t, "gpu")
	create(t, makeJob(ns, "resnet", 1, quantities("nvidia.com/gpu", "16", "cpu", "4")))
	waitFor(t, "the scheduler to give up on the pod", podsAre(ns, "resnet", 1, func(p *corev1.Pod) bool {
		return strings.Contains(scheduledMessage(p), "Insufficient nvidia.com/gpu")
	}))

	r := doctorJSON(t, 1, "resnet", "-n", ns)
	pending := r.mustFind(t, "pending-resources", "FAIL", "tfjob gpu/resnet",
		"needs 16 nvidia.com/gpu per pod; the most free on any node is 8 (the largest node has 8)")
	if !strings.Contains(pending.Fix, "at most 8 per pod") {
		t.Errorf("fix %q: want it to name the most a node has", pending.Fix)
	}
	r.mustFind(t, "gpu-nodes", "WARN", "", "1 GPU pod(s) wait", "1 of 2 nodes have nvidia.com/gpu allocatable (8 in all)")
}

// A quota of one GPU lets the first of two one-GPU workers in; the
// apiserver refuses the second, which therefore never appears.
func testPendingOnQuota(t *testing.T) {
	ns := newNamespace(t, "quota")
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "gpus", Namespace: ns},
		Spec:       corev1.ResourceQuotaSpec{Hard: quantities("requests.nvidia.com/gpu", "1")},
	}
	create(t, q)
	waitFor(t, "the quota controller to fill in the quota's status", func(ctx context.Context) (bool, string) {
		if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(q), q); err != nil {
			return false, err.Error()
		}
		return len(q.Status.Hard) > 0, "status.hard empty"
	})
	create(t, makeJob(ns, "resnet", 2, quantities("nvidia.com/gpu", "1")))
	waitFor(t, "one pod admitted and scheduled", podsAre(ns, "resnet", 1, scheduled))

	r := doctorJSON(t, 1, "resnet", "-n", ns)
	r.mustFind(t, "resource-quota", "FAIL", "tfjob quota/resnet",
		"1 of 2 pod(s) not created", "ResourceQuota gpus: requests.nvidia.com/gpu used 1 of 1, a pod needs 1 more")
	r.mustFind(t, "pending-resources", "OK", "")
}

// A LimitRange of at most one CPU per container refuses a two-CPU worker.
func testRefusedByLimitRange(t *testing.T) {
	ns := newNamespace(t, "limits")
	create(t, &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: ns},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, Max: quantities("cpu", "1"),
		}}},
	})
	create(t, makeJob(ns, "big", 1, quantities("cpu", "2")))
	waitForRefusal(t, ns, "big", "maximum cpu usage per Container is 1, but limit is 2")

	r := doctorJSON(t, 1, "big", "-n", ns)
	r.mustFind(t, "limit-range", "FAIL", "tfjob limits/big",
		"1 of 1 pod(s) not created (the apiserver refused pod big-worker-0", "LimitRange small: the maximum cpu per Container is 1, but worker container tensorflow has a cpu limit of 2")
}

// A job naming a PriorityClass that does not exist: the operator holds it
// with Created=False/PriorityClassNotFound, and doctor names the class.
func testMissingPriorityClass(t *testing.T) {
	ns := newNamespace(t, "noclass")
	job := makeJob(ns, "mnist", 1, quantities("cpu", "1"))
	job.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{PriorityClass: "training-low"}
	create(t, job)
	waitFor(t, "the operator to hold the job", jobCondition(ns, "mnist", kubeflowv1.JobCreated, corev1.ConditionFalse, "PriorityClassNotFound"))

	r := doctorJSON(t, 1, "mnist", "-n", ns)
	missing := r.mustFind(t, "priority-class-missing", "FAIL", "tfjob noclass/mnist",
		"PriorityClass training-low does not exist", "Created=False, reason PriorityClassNotFound")
	if !strings.Contains(missing.Fix, "kubectl create priorityclass training-low --value=-100 --preemption-policy=Never") {
		t.Errorf("fix %q: want the command that creates the class", missing.Fix)
	}
	r.mustFind(t, "resource-quota", "OK", "")
}

// A worker whose container crash-loops, written as a kubelet would write
// it. There is no kubelet to serve its log, and doctor says so.
func testCrashLoop(t *testing.T) {
	ns := newNamespace(t, "crash")
	create(t, makeJob(ns, "mnist", 1, quantities("cpu", "1")))
	waitFor(t, "the pod scheduled", podsAre(ns, "mnist", 1, scheduled))
	pod := jobPods(context.Background(), ns, "mnist")[0]
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "tensorflow", Image: "tensorflow/tensorflow:2.15.0-gpu", RestartCount: 5,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "CrashLoopBackOff", Message: "back-off 2m40s restarting failed container=tensorflow",
		}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
	}}
	if err := apiServer.Client.Status().Update(context.Background(), &pod); err != nil {
		t.Fatalf("writing the pod's status: %v", err)
	}

	run := runDoctor(t, "mnist", "-n", ns)
	t.Logf("doctor mnist -n %s:\n%s", ns, run.stdout)
	if run.exitCode != 1 || !strings.Contains(run.stderr, "1 check(s) FAIL") {
		t.Errorf("exit code %d, stderr %q: want 1 and a line counting one FAIL", run.exitCode, run.stderr)
	}
	want := "FAIL  crash-loop              pod crash/" + pod.Name + ": tfjob crash/mnist: container tensorflow is in CrashLoopBackOff, 5 restart(s); its log could not be read"
	if !strings.Contains(run.stdout, want+"\n") {
		t.Errorf("want the line\n%s\nin the output", want)
	}
	if !strings.Contains(run.stdout, "fix: read why: kubectl logs -n crash "+pod.Name+" -c tensorflow --previous") {
		t.Error("the crash-loop finding has no fix line")
	}
}

// The value-100 trap: a training class above the priority of online pods
// (0 for pods without a class). It is the last case: the class and the
// pods using it are cluster-wide.
func testValue100(t *testing.T) {
	ns := newNamespace(t, "value100")
	create(t, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "training-high"}, Value: 100, Description: "as blog posts suggest"})
	job := makeJob(ns, "mnist", 1, quantities("cpu", "1"))
	job.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{PriorityClass: "training-high"}
	create(t, job)
	waitFor(t, "the pod scheduled", podsAre(ns, "mnist", 1, scheduled))

	r := doctorJSON(t, 1, "mnist", "-n", ns)
	r.mustFind(t, "offline-priority", "FAIL", "priorityclass training-high",
		"training runs at priority 100, not below online pods (lowest online priority 0")
	r.mustFind(t, "offline-priority", "WARN", "priorityclass training-high", "preemptionPolicy PreemptLowerPriority")
	if got := r.find("offline-priority", "FAIL", "priorityclass backfill-offline"); len(got) != 0 {
		t.Errorf("the manager's own class at -100 is blamed: %+v", got)
	}
}

// Wrong calls get one line and exit code 2; a job that does not exist is
// named, with exit code 1 like get, describe and logs.
func TestDoctorUsageErrors(t *testing.T) {
	cases := map[string]struct {
		args     []string
		want     string
		wantExit int
	}{
		"unknown output":  {[]string{"-o", "yaml"}, `--output="yaml": must be text or json`, 2},
		"bad URL":         {[]string{"--prometheus-url", "localhost:9090"}, "must be an http:// or https:// URL", 2},
		"job with -A":     {[]string{"mnist", "-A"}, "give JOB with -n NAMESPACE, not with -A", 2},
		"two jobs":        {[]string{"a", "b"}, "accepts at most 1 arg", 2},
		"a job not there": {[]string{"nope", "-n", "default"}, `TFJob "nope" not found in namespace "default"`, 1},
		"a bad log tail":  {[]string{"--log-tail", "0"}, "--log-tail=0: must be 1 to 10000", 2},
		"an unknown flag": {[]string{"--fix"}, "unknown flag: --fix", 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			run := runDoctor(t, tc.args...)
			if run.exitCode != tc.wantExit {
				t.Errorf("exit code %d, want %d", run.exitCode, tc.wantExit)
			}
			if lines := strings.Split(strings.TrimSpace(run.stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
				t.Errorf("stderr %q: want one line containing %q", run.stderr, tc.want)
			}
			if run.stdout != "" {
				t.Errorf("stdout %q: want nothing", run.stdout)
			}
		})
	}
}
