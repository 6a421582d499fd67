package doctor

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// now is the fixed time of every test snapshot.
var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

const ns = "team-a"

func snapshot() *Snapshot {
	return &Snapshot{Now: now, TFJobsServed: true, OfflinePriorityClass: "backfill-offline", Logs: map[string]string{}, CRD: installedCRD()}
}

// installedCRD is backfill's TFJob CRD as the apiserver returns it once
// applied: stored as v1.
func installedCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := ourCRD().DeepCopy()
	crd.Status.StoredVersions = []string{"v1"}
	return crd
}

func resources(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func node(name string, allocatable ...string) corev1.Node {
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     corev1.NodeStatus{Capacity: resources(allocatable...), Allocatable: resources(allocatable...)},
	}
}

// explained is n with the manager's explanation of its reclaimed
// capacity, as the annotation the manager writes.
func explained(n corev1.Node, e reclaim.Explanation) corev1.Node {
	data, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	n.Annotations = map[string]string{reclaim.ExplanationAnnotation: string(data)}
	return n
}

// annotated is n with one annotation.
func annotated(n corev1.Node, key, value string) corev1.Node {
	n.Annotations = map[string]string{key: value}
	return n
}

// jobBuilder makes TFJobs: makeJob("mnist").workers(2, "nvidia.com/gpu", "4").obj().
type jobBuilder struct{ job kubeflowv1.TFJob }

func makeJob(name string) *jobBuilder {
	return &jobBuilder{job: kubeflowv1.TFJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(now.Add(-10 * time.Minute))},
		Spec:       kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}},
		Status: kubeflowv1.JobStatus{Conditions: []kubeflowv1.JobCondition{
			{Type: kubeflowv1.JobCreated, Status: corev1.ConditionTrue, Reason: "TFJobCreated"},
		}},
	}}
}

func (b *jobBuilder) workers(n int32, requests ...string) *jobBuilder {
	b.job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker] = &kubeflowv1.ReplicaSpec{
		Replicas: ptr.To(n),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "tensorflow", Image: "tf", Resources: corev1.ResourceRequirements{Requests: resources(requests...), Limits: resources(requests...)},
		}}}},
	}
	return b
}

// workerResources sets the worker container's requests and limits apart.
func (b *jobBuilder) workerResources(requests, limits corev1.ResourceList) *jobBuilder {
	b.job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: requests, Limits: limits}
	return b
}

func (b *jobBuilder) priorityClass(name string) *jobBuilder {
	b.job.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{PriorityClass: name}
	return b
}

func (b *jobBuilder) noStatus(created time.Duration) *jobBuilder {
	b.job.Status = kubeflowv1.JobStatus{}
	b.job.CreationTimestamp = metav1.NewTime(now.Add(-created))
	return b
}

// condition sets a condition, replacing one of the same type.
func (b *jobBuilder) condition(t kubeflowv1.JobConditionType, s corev1.ConditionStatus, reason string) *jobBuilder {
	b.job.Status.Conditions = slices.DeleteFunc(b.job.Status.Conditions, func(c kubeflowv1.JobCondition) bool { return c.Type == t })
	b.job.Status.Conditions = append(b.job.Status.Conditions, kubeflowv1.JobCondition{Type: t, Status: s, Reason: reason})
	return b
}

func (b *jobBuilder) obj() kubeflowv1.TFJob { return b.job }

// podBuilder makes pods of a job, or online pods.
type podBuilder struct{ pod corev1.Pod }

func jobPod(job kubeflowv1.TFJob, name string) *podBuilder {
	b := &podBuilder{pod: corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: job.Namespace, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: job.Name, UID: job.UID, Controller: ptr.To(true),
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}}
	spec := job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker]
	b.pod.Spec = *spec.Template.Spec.DeepCopy()
	return b
}

func onlinePod(name string, priority int32) *podBuilder {
	return &podBuilder{pod: corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "web"},
		Spec:       corev1.PodSpec{Priority: ptr.To(priority), Containers: []corev1.Container{{Name: "web", Image: "web"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}}
}

func (b *podBuilder) unschedulable(message string) *podBuilder {
	b.pod.Status.Conditions = append(b.pod.Status.Conditions, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: message,
	})
	return b
}

func (b *podBuilder) on(node string, requests ...string) *podBuilder {
	b.pod.Spec.NodeName = node
	b.pod.Status.Phase = corev1.PodRunning
	if len(requests) > 0 {
		b.pod.Spec.Containers[0].Resources.Requests = resources(requests...)
	}
	return b
}

func (b *podBuilder) crashLooping(restarts int32) *podBuilder {
	b.pod.Spec.NodeName = "n1"
	b.pod.Status.Phase = corev1.PodRunning
	b.pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "tensorflow", RestartCount: restarts,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
	}}
	return b
}

func (b *podBuilder) labels(kv ...string) *podBuilder {
	b.pod.Labels = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		b.pod.Labels[kv[i]] = kv[i+1]
	}
	return b
}

func (b *podBuilder) ready() *podBuilder {
	b.pod.Status.Phase = corev1.PodRunning
	b.pod.Status.Conditions = append(b.pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
	return b
}

func (b *podBuilder) obj() corev1.Pod { return b.pod }

func priorityClass(name string, value int32, policy corev1.PreemptionPolicy) schedulingv1.PriorityClass {
	return schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, PreemptionPolicy: &policy}
}

func lease(renewedAgo time.Duration, durationSeconds int32) coordinationv1.Lease {
	return coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: ManagerLeaseName, Namespace: "backfill-system"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("manager-7f9_1"),
			LeaseDurationSeconds: ptr.To(durationSeconds),
			RenewTime:            ptr.To(metav1.NewMicroTime(now.Add(-renewedAgo))),
		},
	}
}

// verdict is what the tests compare: who said what about which object.
type verdict struct {
	Check  string
	Status Status
	Object string
}

func verdicts(results []Result) []verdict {
	var out []verdict
	for _, r := range results {
		out = append(out, verdict{r.Check, r.Status, r.Object})
	}
	return out
}

// wantTexts checks that r's finding holds each of findings, and its fix
// each of fixes.
func wantTexts(t *testing.T, r Result, findings, fixes []string) {
	t.Helper()
	for _, want := range findings {
		if !strings.Contains(r.Finding, want) {
			t.Errorf("finding %q: want %q in it", r.Finding, want)
		}
	}
	for _, want := range fixes {
		if !strings.Contains(r.Fix, want) {
			t.Errorf("fix %q: want %q in it", r.Fix, want)
		}
	}
}
