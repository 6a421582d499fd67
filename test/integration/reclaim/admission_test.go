//go:build integration

package reclaim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// The namespaces of shared clusters carry ResourceQuotas and LimitRanges.
// A pod on reclaimed capacity holds cpu and memory requests of 0 and its
// template's limits beside its batch resources, so that every admission
// rule accepts it and the scheduler counts it once.

// quotaEverything is the usual quota of a team's namespace: it makes
// every container specify all four.
var quotaEverything = corev1.ResourceList{
	corev1.ResourceRequestsCPU: resource.MustParse("8"), corev1.ResourceLimitsCPU: resource.MustParse("8"),
	corev1.ResourceRequestsMemory: resource.MustParse("16Gi"), corev1.ResourceLimitsMemory: resource.MustParse("16Gi"),
}

// limitDefaults is a LimitRange that gives every container a default
// request and limit below what the jobs here ask for.
var limitDefaults = corev1.LimitRangeItem{
	Type:           corev1.LimitTypeContainer,
	Default:        resources("cpu", "500m", "memory", "512Mi"),
	DefaultRequest: resources("cpu", "250m", "memory", "256Mi"),
	Max:            resources("cpu", "4", "memory", "8Gi"),
}

func TestQuotasAndLimitRangesAdmitReclaimedPods(t *testing.T) {
	dumpOnFailure(t)
	node := nodeNames[1]
	waitForPublished(t, node, 6000)
	withLimits := corev1.ResourceRequirements{Requests: resources("cpu", "1", "memory", "1Gi"), Limits: resources("cpu", "2", "memory", "2Gi")}
	requestsOnly := corev1.ResourceRequirements{Requests: resources("cpu", "1", "memory", "1Gi")}
	cases := map[string]struct {
		quota    corev1.ResourceList
		limits   *corev1.LimitRangeItem
		template corev1.ResourceRequirements
		// wantLimits are the pods' cpu and memory limits; their requests
		// are 0.
		wantLimits corev1.ResourceList
		wantQoS    corev1.PodQOSClass
		// wantUsed is what the quota counts for the job's two pods.
		wantUsed corev1.ResourceList
	}{
		"quota on cpu and memory": {
			quota: quotaEverything, template: withLimits,
			wantLimits: resources("cpu", "2", "memory", "2Gi"), wantQoS: corev1.PodQOSBurstable,
			wantUsed: resources("requests.cpu", "0", "limits.cpu", "4", "requests.memory", "0", "limits.memory", "4Gi"),
		},
		"LimitRange defaults: the template's limits hold": {
			limits: &limitDefaults, template: withLimits,
			wantLimits: resources("cpu", "2", "memory", "2Gi"), wantQoS: corev1.PodQOSBurstable,
		},
		"LimitRange defaults never cap below the request": {
			limits: &limitDefaults, template: requestsOnly,
			wantLimits: resources("cpu", "1", "memory", "1Gi"), wantQoS: corev1.PodQOSBurstable,
		},
		"quota and LimitRange together": {
			quota: quotaEverything, limits: &limitDefaults, template: requestsOnly,
			wantLimits: resources("cpu", "1", "memory", "1Gi"), wantQoS: corev1.PodQOSBurstable,
			wantUsed: resources("requests.cpu", "0", "limits.cpu", "2", "requests.memory", "0", "limits.memory", "2Gi"),
		},
		"quota on the batch resources caps reclaimed use": {
			quota:    resources("requests.backfill.dev/batch-cpu", "2000", "requests.backfill.dev/batch-memory", "2Gi"),
			template: requestsOnly, wantLimits: corev1.ResourceList{}, wantQoS: corev1.PodQOSBestEffort,
			wantUsed: resources("requests.backfill.dev/batch-cpu", "2000", "requests.backfill.dev/batch-memory", "2Gi"),
		},
	}
	i := 0
	for name, tc := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			ns := fmt.Sprintf("admission-%d", i)
			createNamespaceWith(t, ns, tc.quota, tc.limits)
			job := jobIn(ns, "team", node, tc.template)
			createAndCleanUp(t, job)
			eventually(t, settled, "both pods to run", func(ctx context.Context) (bool, string, error) {
				pods, err := podsOf(ctx, ns, job.Name)
				return running(pods, node) == 2, fmt.Sprintf("%d of 2 running", running(pods, node)), err
			})
			pods, err := podsOf(context.Background(), ns, job.Name)
			if err != nil {
				t.Fatal(err)
			}
			byValue := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
			for _, p := range pods {
				r := p.Spec.Containers[0].Resources
				wantRequests := resources("cpu", "0", "memory", "0", "backfill.dev/batch-cpu", "1000", "backfill.dev/batch-memory", "1Gi")
				if diff := cmp.Diff(wantRequests, r.Requests, byValue); diff != "" {
					t.Errorf("pod %s requests (-want +got): nothing but the batch resources may count\n%s", p.Name, diff)
				}
				if diff := cmp.Diff(tc.wantLimits, cpuAndMemoryOf(r.Limits), byValue); diff != "" {
					t.Errorf("pod %s cpu and memory limits (-want +got):\n%s", p.Name, diff)
				}
				if p.Status.QOSClass != tc.wantQoS {
					t.Errorf("pod %s is %s, want %s", p.Name, p.Status.QOSClass, tc.wantQoS)
				}
			}
			if tc.wantUsed != nil {
				eventually(t, 30*time.Second, "the quota to count the pods", func(ctx context.Context) (bool, string, error) {
					q := &corev1.ResourceQuota{}
					err := apiServer.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "team"}, q)
					got := corev1.ResourceList{}
					for name := range tc.wantUsed {
						got[name] = q.Status.Used[name]
					}
					return cmp.Equal(tc.wantUsed, got, byValue), fmt.Sprintf("used %v", q.Status.Used), err
				})
			}
		})
	}
}

// TestQuotaExhausted: a job whose second pod the quota refuses runs its
// first, waits with the reason in its events, is not failed, and starts
// the second as soon as the quota makes room.
func TestQuotaExhausted(t *testing.T) {
	dumpOnFailure(t)
	node := nodeNames[1]
	waitForPublished(t, node, 6000)
	const ns = "admission-exhausted"
	createNamespaceWith(t, ns, resources("requests.backfill.dev/batch-cpu", "1500"), nil)
	job := jobIn(ns, "team", node, corev1.ResourceRequirements{Requests: resources("cpu", "1", "memory", "1Gi")})
	createAndCleanUp(t, job)
	eventually(t, settled, "one pod running and the refusal in the job's events", func(ctx context.Context) (bool, string, error) {
		pods, err := podsOf(ctx, ns, job.Name)
		if err != nil {
			return false, "", err
		}
		refusal, err := eventMessage(ctx, ns, job.Name, "FailedCreatePod")
		return len(pods) == 1 && running(pods, node) == 1 && strings.Contains(refusal, "exceeded quota"),
			fmt.Sprintf("%d pods, %d running, event %q", len(pods), running(pods, node), refusal), err
	})
	throughout(t, 5*time.Second, "the job waiting, not failed", func(ctx context.Context) (bool, string, error) {
		got := &kubeflowv1.TFJob{}
		err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(job), got)
		return !hasCondition(got, kubeflowv1.JobFailed), fmt.Sprintf("%+v", got.Status.Conditions), err
	})
	first, err := podsOf(context.Background(), ns, job.Name)
	if err != nil {
		t.Fatal(err)
	}

	q := &corev1.ResourceQuota{}
	if err := apiServer.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "team"}, q); err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard = resources("requests.backfill.dev/batch-cpu", "4000")
	if err := apiServer.Client.Update(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	eventually(t, settled, "both pods running once the quota makes room", func(ctx context.Context) (bool, string, error) {
		pods, err := podsOf(ctx, ns, job.Name)
		return running(pods, node) == 2, fmt.Sprintf("%d of 2 running", running(pods, node)), err
	})
	pods, err := podsOf(context.Background(), ns, job.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if p.Name == first[0].Name && p.UID != first[0].UID {
			t.Errorf("pod %s was recreated while the job waited: work lost", p.Name)
		}
	}
}

// TestLimitRangeMaxRefused: a template whose limit exceeds a LimitRange's
// maximum gets no pod, and the job's events say which rule refused it.
func TestLimitRangeMaxRefused(t *testing.T) {
	dumpOnFailure(t)
	const ns = "admission-max"
	createNamespaceWith(t, ns, nil, &corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: resources("cpu", "1")})
	job := jobIn(ns, "team", nodeNames[1], corev1.ResourceRequirements{Requests: resources("cpu", "1"), Limits: resources("cpu", "2")})
	createAndCleanUp(t, job)
	eventually(t, settled, "the refusal in the job's events", func(ctx context.Context) (bool, string, error) {
		msg, err := eventMessage(ctx, ns, job.Name, "FailedCreatePod")
		return strings.Contains(msg, "maximum cpu usage per Container is 1, but limit is 2"), fmt.Sprintf("event %q", msg), err
	})
	pods, err := podsOf(context.Background(), ns, job.Name)
	if err != nil || len(pods) != 0 {
		t.Errorf("%d pods (%v), want none", len(pods), err)
	}
}

// createNamespaceWith makes ns with a ResourceQuota "team" of hard and a
// LimitRange of item, where given, and waits for the quota's status (the
// apiserver refuses every pod until the quota controller has set it).
func createNamespaceWith(t *testing.T, ns string, hard corev1.ResourceList, item *corev1.LimitRangeItem) {
	t.Helper()
	ctx := context.Background()
	if err := apiServer.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if item != nil {
		lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{*item}}}
		if err := apiServer.Client.Create(ctx, lr); err != nil {
			t.Fatal(err)
		}
	}
	if hard == nil {
		return
	}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	if err := apiServer.Client.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the quota controller to fill in quota "+ns+"/team", func(ctx context.Context) (bool, string, error) {
		err := apiServer.Client.Get(ctx, client.ObjectKeyFromObject(q), q)
		return len(q.Status.Hard) == len(hard), fmt.Sprintf("status %+v", q.Status), err
	})
}

// jobIn is a job of two workers in ns on node, whose tensorflow container
// asks for r and runs for longer than the test.
func jobIn(ns, name, node string, r corev1.ResourceRequirements) *kubeflowv1.TFJob {
	job := trainingJob(name, node, 2, "1", 10*time.Minute)
	job.Namespace = ns
	job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec.Containers[0].Resources = r
	return job
}

// createAndCleanUp creates job and, after the test, deletes it and waits
// for its pods to go, so that the next test finds the node's capacity.
func createAndCleanUp(t *testing.T, job *kubeflowv1.TFJob) {
	t.Helper()
	if err := apiServer.Client.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		background := metav1.DeletePropagationBackground
		if err := apiServer.Client.Delete(context.Background(), job, &client.DeleteOptions{PropagationPolicy: &background}); err != nil {
			t.Error(err)
		}
		eventually(t, settled, "the pods of "+job.Name+" to go", func(ctx context.Context) (bool, string, error) {
			pods, err := podsOf(ctx, job.Namespace, job.Name)
			return len(pods) == 0, fmt.Sprintf("%d pods", len(pods)), err
		})
	})
}

// waitForPublished waits until node publishes at least milliCPU.
func waitForPublished(t *testing.T, node string, milliCPU int64) {
	t.Helper()
	eventually(t, settled, "node "+node+" to publish reclaimed CPU", func(ctx context.Context) (bool, string, error) {
		_, published, err := explanation(ctx, node)
		return published >= milliCPU, fmt.Sprintf("published %dm", published), err
	})
}

// podsOf are the pods of job in ns.
func podsOf(ctx context.Context, ns, job string) ([]corev1.Pod, error) {
	var pods corev1.PodList
	err := apiServer.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{kubeflowv1.JobNameLabel: job})
	return pods.Items, err
}

// eventMessage is the note of the latest event of reason on the TFJob.
func eventMessage(ctx context.Context, ns, job, reason string) (string, error) {
	var events eventsv1.EventList
	if err := apiServer.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
		return "", err
	}
	msg := ""
	for _, e := range events.Items {
		if e.Regarding.Name == job && e.Reason == reason {
			msg = e.Note
		}
	}
	return msg, nil
}

// cpuAndMemoryOf keeps the cpu and memory of a list.
func cpuAndMemoryOf(list corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := list[name]; ok {
			out[name] = q
		}
	}
	return out
}

// resources is a list of name, quantity pairs.
func resources(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}
