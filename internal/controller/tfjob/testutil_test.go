package tfjob

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// Short names for the replica types and policies the tests use most.
const (
	Chief     = kubeflowv1.ReplicaTypeChief
	Master    = kubeflowv1.ReplicaTypeMaster
	PS        = kubeflowv1.ReplicaTypePS
	Worker    = kubeflowv1.ReplicaTypeWorker
	Evaluator = kubeflowv1.ReplicaTypeEvaluator

	Never     = kubeflowv1.RestartPolicyNever
	OnFailure = kubeflowv1.RestartPolicyOnFailure
	Always    = kubeflowv1.RestartPolicyAlways
	ExitCode  = kubeflowv1.RestartPolicyExitCode

	testNamespace = "ns"
	testImage     = "tensorflow/tensorflow:2.16.1"
)

// testNow is the fixed time of every pass; whole seconds, as the apiserver
// stores them.
var testNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// ago is a time d before testNow.
func ago(d time.Duration) time.Time { return testNow.Add(-d) }

func ptr[T any](v T) *T { return &v }

// jobBuilder builds a TFJob in the style of kueue's testing wrappers.
type jobBuilder struct{ job *kubeflowv1.TFJob }

// makeJob starts a job in the test namespace with no replicas.
func makeJob(name string) *jobBuilder {
	return &jobBuilder{job: &kubeflowv1.TFJob{
		TypeMeta: metav1.TypeMeta{APIVersion: kubeflowv1.GroupVersion.String(), Kind: kubeflowv1.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: testNamespace,
			UID:       types.UID("uid-" + name),
		},
		Spec: kubeflowv1.TFJobSpec{TFReplicaSpecs: map[kubeflowv1.ReplicaType]*kubeflowv1.ReplicaSpec{}},
	}}
}

// replicas adds n replicas of a type whose template has one tensorflow
// container.
func (b *jobBuilder) replicas(rtype kubeflowv1.ReplicaType, n int32, policy kubeflowv1.RestartPolicy) *jobBuilder {
	b.job.Spec.TFReplicaSpecs[rtype] = &kubeflowv1.ReplicaSpec{
		Replicas:      ptr(n),
		RestartPolicy: policy,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: kubeflowv1.ContainerName, Image: testImage}},
		}},
	}
	return b
}

// ports sets the ports of the tensorflow container of a type.
func (b *jobBuilder) ports(rtype kubeflowv1.ReplicaType, ports ...corev1.ContainerPort) *jobBuilder {
	b.job.Spec.TFReplicaSpecs[rtype].Template.Spec.Containers[0].Ports = ports
	return b
}

func (b *jobBuilder) cleanPodPolicy(p kubeflowv1.CleanPodPolicy) *jobBuilder {
	b.job.Spec.RunPolicy.CleanPodPolicy = &p
	return b
}

func (b *jobBuilder) ttl(seconds int32) *jobBuilder {
	b.job.Spec.RunPolicy.TTLSecondsAfterFinished = &seconds
	return b
}

func (b *jobBuilder) deadline(seconds int64) *jobBuilder {
	b.job.Spec.RunPolicy.ActiveDeadlineSeconds = &seconds
	return b
}

func (b *jobBuilder) backoffLimit(n int32) *jobBuilder {
	b.job.Spec.RunPolicy.BackoffLimit = &n
	return b
}

func (b *jobBuilder) suspend(s bool) *jobBuilder {
	b.job.Spec.RunPolicy.Suspend = &s
	return b
}

func (b *jobBuilder) successPolicy(p kubeflowv1.SuccessPolicy) *jobBuilder {
	b.job.Spec.SuccessPolicy = &p
	return b
}

func (b *jobBuilder) dynamicWorker() *jobBuilder {
	b.job.Spec.EnableDynamicWorker = true
	return b
}

func (b *jobBuilder) priorityClass(name string) *jobBuilder {
	b.job.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{PriorityClass: name}
	return b
}

// started records that an earlier pass created the job at start.
func (b *jobBuilder) started(start time.Time) *jobBuilder {
	t := metav1.NewTime(start)
	b.job.Status.StartTime = &t
	return b.condition(kubeflowv1.JobCreated, corev1.ConditionTrue, reasonCreated, start)
}

// condition appends a condition to the status, as setCondition would.
func (b *jobBuilder) condition(ctype kubeflowv1.JobConditionType, status corev1.ConditionStatus, reason string, at time.Time) *jobBuilder {
	setCondition(&b.job.Status, ctype, status, reason, "earlier pass", metav1.NewTime(at))
	return b
}

// finished records that the job ended with a terminal condition at.
func (b *jobBuilder) finished(ctype kubeflowv1.JobConditionType, reason string, at time.Time) *jobBuilder {
	t := metav1.NewTime(at)
	b.job.Status.CompletionTime = &t
	return b.condition(ctype, corev1.ConditionTrue, reason, at)
}

// suspendedAt records that an earlier pass suspended the job: Suspended
// is True and startTime is cleared.
func (b *jobBuilder) suspendedAt(at time.Time) *jobBuilder {
	b.job.Status.StartTime = nil
	return b.condition(kubeflowv1.JobSuspended, corev1.ConditionTrue, reasonSuspended, at)
}

// succeededIndexes records replicas an earlier pass saw succeed.
func (b *jobBuilder) succeededIndexes(rtype kubeflowv1.ReplicaType, indexes ...int32) *jobBuilder {
	rs := replicaStatusFor(&b.job.Status, b.job.Name, rtype)
	rs.SucceededIndexes = indexes
	rs.Succeeded = int32(len(indexes))
	return b
}

func (b *jobBuilder) restarts(n int32) *jobBuilder {
	b.job.Status.Restarts = n
	return b
}

// obj returns the job as the reconciler hands it to planPass: defaulted.
func (b *jobBuilder) counted(uids ...string) *jobBuilder {
	b.job.Status.CountedPods = uids
	return b
}

// As the manager's cache does, it slims a finished job first: a plan test
// whose outcome depends on a field SlimTFJob drops fails.
func (b *jobBuilder) obj() *kubeflowv1.TFJob {
	job := cached(b.job, SlimTFJob)
	kubeflowv1.Default(job)
	return job
}

// rawObj returns the job as written, without defaulting.
func (b *jobBuilder) rawObj() *kubeflowv1.TFJob { return b.job }

// podBuilder builds an observed replica pod.
type podBuilder struct{ pod *corev1.Pod }

// makePod starts a pending pod of a replica, owned by the job and carrying
// the tracking finalizer, as podFor creates it.
func makePod(job *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType, index int) *podBuilder {
	name := replicaName(job.Name, rtype, index)
	return &podBuilder{pod: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       job.Namespace,
			UID:             types.UID("uid-" + name),
			Labels:          replicaLabels(job.Name, rtype, index),
			OwnerReferences: []metav1.OwnerReference{ownerReference(job)},
			Finalizers:      []string{trackingFinalizer},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: kubeflowv1.ContainerName, Image: testImage}}},
		Status: corev1.PodStatus{
			Phase:             corev1.PodPending,
			ContainerStatuses: []corev1.ContainerStatus{{Name: kubeflowv1.ContainerName}},
		},
	}}
}

func (b *podBuilder) phase(p corev1.PodPhase) *podBuilder {
	b.pod.Status.Phase = p
	return b
}

// uid replaces the pod's UID, e.g. for the pod recreated under a name.
func (b *podBuilder) uid(uid string) *podBuilder {
	b.pod.UID = types.UID(uid)
	return b
}

// exitCode records that the tensorflow container terminated with code,
// one minute before testNow.
func (b *podBuilder) exitCode(code int32) *podBuilder {
	return b.exitCodeAt(code, ago(time.Minute))
}

func (b *podBuilder) exitCodeAt(code int32, finished time.Time) *podBuilder {
	b.pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode:   code,
		FinishedAt: metav1.NewTime(finished),
	}}
	return b
}

// restarts records in-place container restarts by the kubelet.
func (b *podBuilder) restarts(n int32) *podBuilder {
	b.pod.Status.ContainerStatuses[0].RestartCount = n
	return b
}

// deleting marks the pod as being deleted: its deletion was asked for at
// asked, with a grace period of grace seconds.
func (b *podBuilder) deleting(asked time.Time, grace int64) *podBuilder {
	t := metav1.NewTime(asked.Add(time.Duration(grace) * time.Second))
	b.pod.DeletionTimestamp = &t
	b.pod.DeletionGracePeriodSeconds = &grace
	return b
}

// disruption adds a DisruptionTarget condition with reason.
func (b *podBuilder) disruption(reason string) *podBuilder {
	b.pod.Status.Conditions = append(b.pod.Status.Conditions, corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason,
	})
	return b
}

// statusReason sets the pod's status reason, as the kubelet does on eviction.
func (b *podBuilder) statusReason(reason string) *podBuilder {
	b.pod.Status.Reason = reason
	return b
}

func (b *podBuilder) obj() *corev1.Pod { return b.pod }

// withTaken marks names as held by pods and services the job does not own.
func withTaken(obs observed, pods, services []string) observed {
	obs.takenPods.Insert(pods...)
	obs.takenServices.Insert(services...)
	return obs
}

// observe is what the cache shows: the pods given and every service of the
// job.
func observe(job *kubeflowv1.TFJob, pods ...*corev1.Pod) observed {
	obs := observePods(pods...)
	for _, id := range allReplicas(job) {
		svc := serviceFor(job, id.rtype, id.index)
		svc.UID = types.UID("uid-svc-" + svc.Name)
		obs.services[svc.Name] = cached(svc, SlimService)
	}
	return obs
}

// observePods is what the cache shows: the pods given and no service.
// Like the manager's cache, it holds slim copies: a plan test whose
// outcome depends on a field SlimPod drops fails.
func observePods(pods ...*corev1.Pod) observed {
	obs := observed{
		pods:          map[string]*corev1.Pod{},
		services:      map[string]*corev1.Service{},
		takenPods:     sets.New[string](),
		takenServices: sets.New[string](),
	}
	for _, pod := range pods {
		obs.pods[pod.Name] = cached(pod, SlimPod)
	}
	return obs
}

// cached is obj as the manager's cache stores it, through transform.
func cached[T any](obj T, transform func(any) (any, error)) T {
	out, err := transform(obj)
	if err != nil {
		panic(err)
	}
	return out.(T)
}

// statusSummary is the part of a job status a plan test compares; times
// are RFC 3339 strings ("" for nil) and conditions "Type=Status/Reason".
type statusSummary struct {
	Conditions     []string
	StartTime      string
	CompletionTime string
	Restarts       int32
	Disruptions    int32
	CountedPods    []string
	Replicas       map[kubeflowv1.ReplicaType]replicaSummary
}

type replicaSummary struct {
	Active, Succeeded, Failed int32
	SucceededIndexes          []int32
}

func summariseStatus(st kubeflowv1.JobStatus) statusSummary {
	s := statusSummary{
		StartTime:      timeString(st.StartTime),
		CompletionTime: timeString(st.CompletionTime),
		Restarts:       st.Restarts,
		Disruptions:    st.Disruptions,
		CountedPods:    st.CountedPods,
	}
	for _, c := range st.Conditions {
		s.Conditions = append(s.Conditions, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	for t, rs := range st.ReplicaStatuses {
		if s.Replicas == nil {
			s.Replicas = map[kubeflowv1.ReplicaType]replicaSummary{}
		}
		s.Replicas[t] = replicaSummary{rs.Active, rs.Succeeded, rs.Failed, rs.SucceededIndexes}
	}
	return s
}

func timeString(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// rfc is the RFC 3339 form of a time, as statusSummary holds it.
func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// planSummary is the part of a plan a test compares: object names, sorted
// and without duplicates for deletions and releases (writes of the same
// object twice are harmless), and events as "Type/Reason".
type planSummary struct {
	CreatePods     []string
	CreateServices []string
	DeletePods     []string
	ReleasePods    []string
	DeleteServices []string
	DeleteJob      bool
	RequeueAfter   time.Duration
	Events         []string
}

func summarisePlan(job *kubeflowv1.TFJob, p *plan) planSummary {
	s := planSummary{DeleteJob: p.deleteJob, RequeueAfter: p.requeueAfter}
	for _, id := range p.createPods {
		s.CreatePods = append(s.CreatePods, replicaName(job.Name, id.rtype, id.index))
	}
	for _, id := range p.createServices {
		s.CreateServices = append(s.CreateServices, replicaName(job.Name, id.rtype, id.index))
	}
	s.DeletePods = podNames(p.deletePods)
	s.ReleasePods = podNames(p.releasePods)
	names := sets.New[string]()
	for _, svc := range p.deleteServices {
		names.Insert(svc.Name)
	}
	if names.Len() > 0 {
		s.DeleteServices = sets.List(names)
	}
	for _, e := range p.events {
		s.Events = append(s.Events, e.eventType+"/"+e.reason)
	}
	return s
}

// podNames lists the pods' names sorted, keeping duplicates: a plan must
// delete or release each pod once.
func podNames(pods []*corev1.Pod) []string {
	var names []string
	for _, pod := range pods {
		names = append(names, pod.Name)
	}
	sort.Strings(names)
	return names
}
