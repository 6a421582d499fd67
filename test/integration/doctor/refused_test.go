//go:build integration

package doctor

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// Pods the apiserver refuses at creation, in namespaces with the quotas
// and LimitRanges of a shared cluster. The suite's manager runs without
// reclaim and sends each template as it is, so a template written in a
// reclaimed pod's shape makes the apiserver judge exactly that shape.

// teamQuota is the usual quota of a shared namespace: cpu and memory
// requests and limits.
func teamQuota(t *testing.T, ns string) {
	t.Helper()
	createQuota(t, ns, "team", quantities("requests.cpu", "4", "requests.memory", "8Gi", "limits.cpu", "8", "limits.memory", "16Gi"))
}

// createQuota creates a ResourceQuota and waits for the quota controller
// to count its usage: until then the apiserver refuses every pod it
// counts.
func createQuota(t *testing.T, ns, name string, hard corev1.ResourceList) {
	t.Helper()
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	create(t, q)
	waitFor(t, "the quota controller to count ResourceQuota "+name, func(ctx context.Context) (bool, string) {
		if err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(q), q); err != nil {
			return false, err.Error()
		}
		return len(q.Status.Used) == len(hard), "status.used not filled in"
	})
}

// withResources is job with its workers' container resources replaced.
func withResources(job *kubeflowv1.TFJob, r corev1.ResourceRequirements) *kubeflowv1.TFJob {
	job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec.Containers[0].Resources = r
	return job
}

// issueResources are the issue's template: requests cpu 1 / memory 1Gi,
// limits cpu 2 / memory 2Gi.
func issueResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: quantities("cpu", "1", "memory", "1Gi"), Limits: quantities("cpu", "2", "memory", "2Gi")}
}

// reclaimedShape is r as the operator sends it with --reclaim, in a
// namespace with these LimitRanges.
func reclaimedShape(t *testing.T, r corev1.ResourceRequirements, ranges ...corev1.LimitRange) corev1.ResourceRequirements {
	t.Helper()
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "tensorflow", Resources: r}}}
	if _, err := colocation.ToBatchResources(&spec, colocation.ContainerRulesOf(ranges)); err != nil {
		t.Fatal(err)
	}
	return spec.Containers[0].Resources
}

// waitForRefusal waits for the operator's FailedCreatePod event on the
// job quoting the apiserver's refusal.
func waitForRefusal(t *testing.T, ns, job, want string) {
	t.Helper()
	waitFor(t, "the operator to record the refusal of "+job+"'s pods", func(ctx context.Context) (bool, string) {
		var events corev1.EventList
		if err := apiServer.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == job && e.Reason == "FailedCreatePod" && strings.Contains(e.Message, want) {
				return true, ""
			}
		}
		return false, describeJob(ctx, ns, job)
	})
}

// The issue: a namespace with a quota on cpu and memory, and the pods the
// operator used to make on reclaimed capacity, with the batch resources
// and no cpu or memory at all. The apiserver refuses every one ("must
// specify"); doctor said 0 FAIL. It must FAIL, name the quota and what it
// wants, and say how to fix it.
func testRefusedByQuotaOnCPUAndMemory(t *testing.T) {
	ns := newNamespace(t, "q-quota")
	teamQuota(t, ns)
	batchOnly := quantities(string(colocation.ResourceBatchCPU), "1000", string(colocation.ResourceBatchMemory), "1Gi")
	create(t, withResources(makeJob(ns, "j", 2, nil), corev1.ResourceRequirements{Requests: batchOnly, Limits: batchOnly}))
	waitForRefusal(t, ns, "j", "failed quota: team: must specify limits.cpu for: tensorflow; limits.memory for: tensorflow; requests.cpu for: tensorflow; requests.memory for: tensorflow")

	r := doctorJSON(t, 1, "j", "-n", ns)
	refused := r.mustFind(t, "resource-quota", "FAIL", "tfjob q-quota/j",
		"2 of 2 pod(s) not created (the apiserver refused pod j-worker-",
		"ResourceQuota team counts limits.cpu, limits.memory, requests.cpu, requests.memory, which container(s) tensorflow do not state")
	for _, want := range []string{"set resources.limits.cpu, resources.limits.memory, resources.requests.cpu, resources.requests.memory of container(s) tensorflow in the job's templates (kubectl edit tfjob j -n q-quota)", "a LimitRange with a default limit"} {
		if !strings.Contains(refused.Fix, want) {
			t.Errorf("fix %q: want %q in it", refused.Fix, want)
		}
	}
	r.mustFind(t, "limit-range", "OK", "")
	r.mustFind(t, "pod-create", "OK", "")

	run := runDoctor(t, "j", "-n", ns)
	if !strings.Contains(run.stdout, "FAIL  resource-quota          tfjob q-quota/j: 2 of 2 pod(s) not created") || !strings.Contains(run.stdout, "fix: set resources.limits.cpu") {
		t.Errorf("text output lacks the FAIL line and its fix:\n%s", run.stdout)
	}
}

// A quota on reclaimed CPU (requests.backfill.dev/batch-cpu) of 1.5 CPU
// admits one of two workers asking 1 CPU each, in the shape the operator
// gives reclaimed pods, and refuses the other ("exceeded quota"). Doctor names the quota in CPU, not in milli-CPU units.
func testRefusedByQuotaOnReclaimedCPU(t *testing.T) {
	ns := newNamespace(t, "q-batch")
	createQuota(t, ns, "batch", quantities("requests."+string(colocation.ResourceBatchCPU), "1500"))
	create(t, withResources(makeJob(ns, "j", 2, nil), reclaimedShape(t, issueResources())))
	waitForRefusal(t, ns, "j", "exceeded quota: batch, requested: requests.backfill.dev/batch-cpu=1k, used: requests.backfill.dev/batch-cpu=1k, limited: requests.backfill.dev/batch-cpu=1500")

	r := doctorJSON(t, 1, "j", "-n", ns)
	refused := r.mustFind(t, "resource-quota", "FAIL", "tfjob q-batch/j",
		"1 of 2 pod(s) not created (the apiserver refused pod j-worker-",
		"ResourceQuota batch: requests.backfill.dev/batch-cpu (reclaimed CPU) used 1 of 1500m, a pod needs 1 more")
	if !strings.Contains(refused.Fix, "this quota caps the namespace's reclaimed capacity") {
		t.Errorf("fix %q: want it to say the quota caps reclaimed capacity", refused.Fix)
	}
}

// LimitRanges and quotas with the operator's reclaimed pods. Before any
// node publishes reclaimed capacity (reclaim looks off to doctor), a pod
// whose memory request is 0 under a maxLimitRequestRatio is refused and
// doctor names the LimitRange. Then, with reclaimed capacity published:
// a job whose template's cpu limit is over a LimitRange's max is refused,
// and doctor blames the LimitRange but not the tight requests.cpu quota,
// which the reclaimed pods' zero requests fit; and a job that fits the
// quota runs, with nothing to report.
func testReclaimedInQuotaNamespace(t *testing.T) {
	ns := newNamespace(t, "q-limits")
	small := corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: ns},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, Max: quantities("cpu", "1"), MaxLimitRequestRatio: quantities("memory", "4"),
		}}},
	}
	create(t, &small)
	createQuota(t, ns, "team", quantities("requests.cpu", "500m", "requests.memory", "1Gi", "limits.cpu", "8", "limits.memory", "16Gi"))

	zero := corev1.ResourceRequirements{
		Requests: quantities("cpu", "0", "memory", "0", string(colocation.ResourceBatchCPU), "500", string(colocation.ResourceBatchMemory), "1Gi"),
		Limits:   quantities("cpu", "500m", "memory", "2Gi", string(colocation.ResourceBatchCPU), "500", string(colocation.ResourceBatchMemory), "1Gi"),
	}
	create(t, withResources(makeJob(ns, "zero", 1, nil), zero))
	waitForRefusal(t, ns, "zero", "memory max limit to request ratio per Container is 4, but no request is specified or request is 0")
	r := doctorJSON(t, 1, "zero", "-n", ns)
	r.mustFind(t, "limit-range", "FAIL", "tfjob q-limits/zero",
		"1 of 1 pod(s) not created (the apiserver refused pod zero-worker-0",
		"LimitRange small: the memory limit per Container may be at most 4 times the request, but worker container tensorflow has no memory request (or 0)")

	t.Cleanup(func() { unpublish(t, cpuNode) })
	// Room for the jobs of the cases before too, which then start.
	published := colocation.Resources{MilliCPU: 14000, Memory: 56 * gib}
	publish(t, cpuNode, published, reclaim.Explanation{
		State: reclaim.StateFresh, At: time.Now(), Why: "grew toward the target",
		Capacity: colocation.Resources{MilliCPU: 16000, Memory: 64 * gib}, Target: published, Published: published,
	})

	// The template as written; the operator with --reclaim keeps its cpu
	// limit of 2, over the max, as the suite's operator does.
	create(t, withResources(makeJob(ns, "big", 1, nil), issueResources()))
	waitForRefusal(t, ns, "big", "maximum cpu usage per Container is 1, but limit is 2")
	r = doctorJSON(t, 1, "big", "-n", ns)
	big := r.mustFind(t, "limit-range", "FAIL", "tfjob q-limits/big",
		"1 of 1 pod(s) not created (the apiserver refused pod big-worker-0",
		"LimitRange small: the maximum cpu per Container is 1, but worker container tensorflow has a cpu limit of 2")
	if !strings.Contains(big.Fix, "set resources.limits.cpu of worker container tensorflow to at most 1") || !strings.Contains(big.Fix, "raise the max of LimitRange small") {
		t.Errorf("fix %q: want the limit to set and the LimitRange to widen", big.Fix)
	}
	// requests.cpu 500m would not hold the template's request of 1; the
	// reclaimed pods request 0.
	r.mustFind(t, "resource-quota", "OK", "")

	// Within the max: the operator raises the memory requests to a
	// quarter of the limit, for the ratio; the quota holds both pods.
	fits := corev1.ResourceRequirements{Requests: quantities("cpu", "500m", "memory", "512Mi"), Limits: quantities("cpu", "1", "memory", "1Gi")}
	create(t, withResources(makeJob(ns, "fits", 2, nil), reclaimedShape(t, fits, small)))
	waitFor(t, "both pods scheduled on reclaimed capacity", podsAre(ns, "fits", 2, scheduled))
	r = doctorJSON(t, 0, "fits", "-n", ns)
	for _, check := range []string{"resource-quota", "limit-range", "pod-create", "pending-resources"} {
		r.mustFind(t, check, "OK", "")
	}
}

// A namespace that enforces the restricted Pod Security level refuses a
// template that does not meet it: neither a quota nor a LimitRange, so
// pod-create quotes the apiserver and says what to change.
func testRefusedByPodSecurity(t *testing.T) {
	ns := newNamespace(t, "q-restricted")
	namespace := &corev1.Namespace{}
	if err := apiServer.Client.Get(context.Background(), client.ObjectKey{Name: ns}, namespace); err != nil {
		t.Fatal(err)
	}
	namespace.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}
	if err := apiServer.Client.Update(context.Background(), namespace); err != nil {
		t.Fatalf("labelling namespace %s: %v", ns, err)
	}
	create(t, makeJob(ns, "j", 1, quantities("cpu", "1")))
	waitForRefusal(t, ns, "j", "violates PodSecurity")

	r := doctorJSON(t, 1, "j", "-n", ns)
	refused := r.mustFind(t, "pod-create", "FAIL", "tfjob q-restricted/j",
		`1 of 1 pod(s) not created (the apiserver refused pod j-worker-0`, `pods "j-worker-0" is forbidden: violates PodSecurity "restricted:latest"`)
	if !strings.Contains(refused.Fix, "pod-security.kubernetes.io/enforce") {
		t.Errorf("fix %q: want the namespace's Pod Security label named", refused.Fix)
	}
	r.mustFind(t, "resource-quota", "OK", "")
	r.mustFind(t, "limit-range", "OK", "")
}
