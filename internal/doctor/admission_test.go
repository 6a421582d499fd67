package doctor

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

func quota(name string, hard, used corev1.ResourceList) corev1.ResourceQuota {
	return corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
		Status:     corev1.ResourceQuotaStatus{Hard: hard, Used: used},
	}
}

func limitRange(name string, item corev1.LimitRangeItem) corev1.LimitRange {
	if item.Type == "" {
		item.Type = corev1.LimitTypeContainer
	}
	return corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{item}}}
}

// refused is the operator's FailedCreatePod event on a job, ago before
// now.
func refused(job kubeflowv1.TFJob, ago time.Duration, message string) corev1.Event {
	return corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + "-refused", Namespace: ns}, Type: corev1.EventTypeWarning, Reason: reasonFailedCreatePod,
		InvolvedObject: corev1.ObjectReference{Kind: "TFJob", Name: job.Name, UID: job.UID},
		Message:        message, EventTime: metav1.NewMicroTime(now.Add(-ago)),
	}
}

// reclaimOnNodes is a node the manager explains: reclaim is on.
func reclaimOnNodes() []corev1.Node {
	return []corev1.Node{explained(node("cpu-0", "cpu", "16"), reclaim.Explanation{State: reclaim.StateFresh, At: now, Why: "grew"})}
}

// admissionCase is a job in a namespace with quotas, LimitRanges and
// events, and what one check says of it.
type admissionCase struct {
	job          kubeflowv1.TFJob
	quotas       []corev1.ResourceQuota
	ranges       []corev1.LimitRange
	events       []corev1.Event
	pods         []corev1.Pod
	reclaim      bool
	want         []verdict
	wantFindings []string
	wantFix      []string
}

func (tc admissionCase) run(t *testing.T, check func([]jobRefusal) []Result) {
	t.Helper()
	s := snapshot()
	s.Jobs, s.Quotas, s.LimitRanges, s.Events, s.Pods = []kubeflowv1.TFJob{tc.job}, tc.quotas, tc.ranges, tc.events, tc.pods
	if tc.reclaim {
		s.Nodes = reclaimOnNodes()
	}
	got := check(refusalsOf(s, s.activeJobs()))
	if diff := cmp.Diff(tc.want, verdicts(got)); diff != "" {
		t.Fatalf("verdicts (-want +got):\n%s\n%+v", diff, got)
	}
	wantTexts(t, got[0], tc.wantFindings, tc.wantFix)
}

func TestCheckQuota(t *testing.T) {
	job := makeJob("resnet").workers(2, "nvidia.com/gpu", "2", "cpu", "1").obj()
	oneRunning := []corev1.Pod{jobPod(job, "resnet-worker-0").on("gpu-0").obj()}
	fail := []verdict{{CheckResourceQuota, StatusFail, "tfjob team-a/resnet"}}
	warn := []verdict{{CheckResourceQuota, StatusWarn, "tfjob team-a/resnet"}}
	fine := []verdict{{CheckResourceQuota, StatusOK, ""}}
	// The issue's job: two workers asking cpu 1 / memory 1Gi, limited
	// to cpu 2 / memory 2Gi.
	issueJob := makeJob("j").workers(2).workerResources(resources("cpu", "1", "memory", "1Gi"), resources("cpu", "2", "memory", "2Gi")).obj()
	noLimits := makeJob("j").workers(2).workerResources(resources("cpu", "1", "memory", "1Gi"), nil).obj()
	// The issue's namespace: a quota on cpu and memory requests and
	// limits, with room.
	team := quota("team", resources("requests.cpu", "4", "requests.memory", "8Gi", "limits.cpu", "8", "limits.memory", "16Gi"),
		resources("requests.cpu", "0", "requests.memory", "0", "limits.cpu", "0", "limits.memory", "0"))
	mustSpecifyAll := `creating pod j-worker-1: pods "j-worker-1" is forbidden: failed quota: team: must specify limits.cpu for: tensorflow; limits.memory for: tensorflow; requests.cpu for: tensorflow; requests.memory for: tensorflow`
	cases := map[string]admissionCase{
		"GPU quota used up": {
			job:          job,
			quotas:       []corev1.ResourceQuota{quota("gpus", resources("requests.nvidia.com/gpu", "4", "pods", "10"), resources("requests.nvidia.com/gpu", "4", "pods", "3"))},
			pods:         oneRunning,
			want:         fail,
			wantFindings: []string{"1 of 2 pod(s) not created: ResourceQuota gpus: requests.nvidia.com/gpu used 4 of 4, a pod needs 2 more"},
			wantFix:      []string{"raise requests.nvidia.com/gpu of ResourceQuota gpus (kubectl edit resourcequota gpus -n team-a"},
		},
		"pod count used up": {
			job:          job,
			quotas:       []corev1.ResourceQuota{quota("count", resources("pods", "3"), resources("pods", "3"))},
			want:         fail,
			wantFindings: []string{"2 of 2 pod(s) not created", "pods used 3 of 3, a pod needs 1 more (room for 0 of the 2 missing pods)"},
			wantFix:      []string{"or run fewer replicas"},
		},
		"room in the quota": {
			job:    job,
			quotas: []corev1.ResourceQuota{quota("gpus", resources("requests.nvidia.com/gpu", "8"), resources("requests.nvidia.com/gpu", "2"))},
			want:   fine,
		},
		"every pod exists": {
			job:    job,
			quotas: []corev1.ResourceQuota{quota("gpus", resources("requests.nvidia.com/gpu", "4"), resources("requests.nvidia.com/gpu", "4"))},
			pods:   append(oneRunning, jobPod(job, "resnet-worker-1").on("gpu-1").obj()),
			want:   fine,
		},
		"held for a missing PriorityClass instead": {
			job:    makeJob("resnet").workers(2, "nvidia.com/gpu", "2").condition(kubeflowv1.JobCreated, corev1.ConditionFalse, reasonPriorityClassNotFound).obj(),
			quotas: []corev1.ResourceQuota{quota("count", resources("pods", "0"), resources("pods", "0"))},
			want:   fine,
		},
		"the apiserver's refusal, which the quota still makes": {
			job:          job,
			quotas:       []corev1.ResourceQuota{quota("compute", resources("limits.cpu", "8"), resources("limits.cpu", "8"))},
			events:       []corev1.Event{refused(job, 3*time.Minute, `creating pod resnet-worker-0: pods "resnet-worker-0" is forbidden: exceeded quota: compute, requested: limits.cpu=1, used: limits.cpu=8, limited: limits.cpu=8`)},
			want:         fail,
			wantFindings: []string{"2 of 2 pod(s) not created (the apiserver refused pod resnet-worker-0 3m ago): ResourceQuota compute: limits.cpu used 8 of 8, a pod needs 1 more (room for 0 of the 2 missing pods)"},
		},
		"the apiserver's refusal by a quota deleted since": {
			job:          job,
			events:       []corev1.Event{refused(job, 3*time.Minute, `pods "resnet-worker-0" is forbidden: exceeded quota: compute, requested: limits.cpu=1, used: limits.cpu=8, limited: limits.cpu=8`)},
			want:         warn,
			wantFindings: []string{"ResourceQuota compute: limits.cpu used 8 of 8, a pod needs 1 more; ResourceQuota compute no longer exists"},
			wantFix:      []string{"nothing, if the operator's next try creates the pods"},
		},
		"a refusal before the operator created every pod it tried": {
			job: job,
			events: []corev1.Event{
				refused(job, 3*time.Minute, `pods "resnet-worker-0" is forbidden: exceeded quota: compute, requested: limits.cpu=1, used: limits.cpu=8, limited: limits.cpu=8`),
				{ObjectMeta: metav1.ObjectMeta{Name: "created", Namespace: ns}, Type: corev1.EventTypeNormal, Reason: reasonSuccessfulCreatePod,
					InvolvedObject: corev1.ObjectReference{Kind: "TFJob", Name: job.Name, UID: job.UID}, EventTime: metav1.NewMicroTime(now.Add(-time.Minute))},
			},
			want: fine,
		},
		"a refusal of an earlier job of the same name": {
			job: job,
			events: []corev1.Event{func() corev1.Event {
				e := refused(job, 3*time.Minute, `pods "resnet-worker-0" is forbidden: exceeded quota: compute, requested: limits.cpu=1, used: limits.cpu=8, limited: limits.cpu=8`)
				e.InvolvedObject.UID = "uid-of-another"
				return e
			}()},
			want: fine,
		},
		"the issue: a quota on cpu and memory, pods with only the batch resources": {
			job: func() kubeflowv1.TFJob {
				// The pods the operator made before: cpu and memory moved
				// to the batch resources, nothing left of them.
				j := issueJob.DeepCopy()
				j.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{
					Requests: resources(string(colocation.ResourceBatchCPU), "1000", string(colocation.ResourceBatchMemory), "1Gi"),
					Limits:   resources(string(colocation.ResourceBatchCPU), "1000", string(colocation.ResourceBatchMemory), "1Gi"),
				}
				return *j
			}(),
			quotas:       []corev1.ResourceQuota{team},
			events:       []corev1.Event{refused(issueJob, time.Minute, mustSpecifyAll)},
			want:         []verdict{{CheckResourceQuota, StatusFail, "tfjob team-a/j"}},
			wantFindings: []string{"2 of 2 pod(s) not created (the apiserver refused pod j-worker-1 60s ago): ResourceQuota team counts limits.cpu, limits.memory, requests.cpu, requests.memory, which container(s) tensorflow do not state"},
			wantFix:      []string{"set resources.limits.cpu, resources.limits.memory, resources.requests.cpu, resources.requests.memory of container(s) tensorflow in the job's templates (kubectl edit tfjob j -n team-a)", "a LimitRange with a default limit"},
		},
		"the issue, on reclaimed capacity: zero requests and the template's limits fit": {
			job:     issueJob,
			quotas:  []corev1.ResourceQuota{team},
			reclaim: true,
			want:    fine,
		},
		"the issue's refusal, from before the pods kept their limits": {
			job:          issueJob,
			quotas:       []corev1.ResourceQuota{team},
			events:       []corev1.Event{refused(issueJob, time.Minute, mustSpecifyAll)},
			reclaim:      true,
			want:         []verdict{{CheckResourceQuota, StatusWarn, "tfjob team-a/j"}},
			wantFindings: []string{"ResourceQuota team admits the pods now"},
		},
		"reclaimed: a tight requests.cpu quota counts the zero requests": {
			job:     issueJob,
			quotas:  []corev1.ResourceQuota{quota("cpu", resources("requests.cpu", "500m", "requests.memory", "512Mi"), resources("requests.cpu", "0", "requests.memory", "0"))},
			reclaim: true,
			want:    fine,
		},
		"reclaimed: the templates' limits count against limits.cpu": {
			job:          issueJob,
			quotas:       []corev1.ResourceQuota{quota("limits", resources("limits.cpu", "3"), resources("limits.cpu", "0"))},
			reclaim:      true,
			want:         []verdict{{CheckResourceQuota, StatusFail, "tfjob team-a/j"}},
			wantFindings: []string{"ResourceQuota limits: limits.cpu used 0 of 3, a pod needs 2 more (room for 1 of the 2 missing pods)"},
			wantFix:      []string{"the pods keep their templates' cpu limits, which this quota counts"},
		},
		"reclaimed, no limits in the template: the quota wants them": {
			job:          noLimits,
			quotas:       []corev1.ResourceQuota{team},
			reclaim:      true,
			want:         []verdict{{CheckResourceQuota, StatusFail, "tfjob team-a/j"}},
			wantFindings: []string{"ResourceQuota team counts limits.cpu, limits.memory, which container(s) tensorflow do not state"},
			wantFix:      []string{"set resources.limits.cpu, resources.limits.memory of container(s) tensorflow", "on reclaimed capacity the pods keep the templates' limits and request 0 cpu and memory"},
		},
		"reclaimed, no limits in the template, a LimitRange default limit": {
			job:     noLimits,
			quotas:  []corev1.ResourceQuota{team},
			ranges:  []corev1.LimitRange{limitRange("defaults", corev1.LimitRangeItem{Default: resources("cpu", "500m", "memory", "512Mi")})},
			reclaim: true,
			want:    fine,
		},
		"reclaimed: a quota on reclaimed CPU used up": {
			job:    issueJob,
			quotas: []corev1.ResourceQuota{quota("batch", resources("requests.backfill.dev/batch-cpu", "1500"), resources("requests.backfill.dev/batch-cpu", "1k"))},
			pods: []corev1.Pod{func() corev1.Pod {
				p := jobPod(issueJob, "j-worker-0").on("cpu-0").obj()
				if _, err := colocation.ToBatchResources(&p.Spec, colocation.ContainerRulesOf(nil)); err != nil {
					t.Fatal(err)
				}
				p.Labels = map[string]string{kubeflowv1.ReplicaTypeLabel: "worker"}
				p.Annotations = map[string]string{colocation.OriginalResourcesAnnotation: "{}"}
				return p
			}()},
			want:         []verdict{{CheckResourceQuota, StatusFail, "tfjob team-a/j"}},
			wantFindings: []string{"1 of 2 pod(s) not created: ResourceQuota batch: requests.backfill.dev/batch-cpu (reclaimed CPU) used 1 of 1500m, a pod needs 1 more"},
			wantFix:      []string{"this quota caps the namespace's reclaimed capacity (each pod asks its template's cpu request as backfill.dev/batch-cpu)"},
		},
		"a quota lowered below what the namespace uses admits not even a zero request": {
			job:          issueJob,
			quotas:       []corev1.ResourceQuota{quota("cpu", resources("requests.cpu", "1"), resources("requests.cpu", "2"))},
			reclaim:      true,
			want:         []verdict{{CheckResourceQuota, StatusFail, "tfjob team-a/j"}},
			wantFindings: []string{"requests.cpu used 2 of 1, over its hard limit already"},
		},
		"usage not counted yet": {
			job:          job,
			quotas:       []corev1.ResourceQuota{quota("team", resources("requests.cpu", "4"), nil)},
			want:         fail,
			wantFindings: []string{"ResourceQuota team has not counted its usage of requests.cpu yet"},
			wantFix:      []string{"quota controller of kube-controller-manager"},
		},
		"a BestEffort-scoped quota judges reclaimed pods without limits": {
			job: noLimits,
			quotas: []corev1.ResourceQuota{func() corev1.ResourceQuota {
				q := quota("besteffort", resources("pods", "1"), resources("pods", "1"))
				q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
				return q
			}()},
			reclaim:      true,
			want:         []verdict{{CheckResourceQuota, StatusFail, "tfjob team-a/j"}},
			wantFindings: []string{"ResourceQuota besteffort: pods used 1 of 1"},
		},
		"a BestEffort-scoped quota leaves reclaimed pods with limits alone": {
			job: issueJob,
			quotas: []corev1.ResourceQuota{func() corev1.ResourceQuota {
				q := quota("besteffort", resources("pods", "1"), resources("pods", "1"))
				q.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
				return q
			}()},
			reclaim: true,
			want:    fine,
		},
		"a quota scoped to the offline PriorityClass": {
			job: job,
			quotas: []corev1.ResourceQuota{func() corev1.ResourceQuota {
				q := quota("offline", resources("pods", "1"), resources("pods", "1"))
				q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
					ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"backfill-offline"},
				}}}
				return q
			}()},
			want: fail,
		},
		"a quota scoped to another PriorityClass": {
			job: job,
			quotas: []corev1.ResourceQuota{func() corev1.ResourceQuota {
				q := quota("online", resources("pods", "1"), resources("pods", "1"))
				q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
					ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"web"},
				}}}
				return q
			}()},
			want: fine,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { tc.run(t, checkQuota) })
	}
}

func TestCheckLimitRange(t *testing.T) {
	reclaimedJob := makeJob("j").workers(1).workerResources(resources("cpu", "1", "memory", "1Gi"), resources("cpu", "2", "memory", "2Gi")).obj()
	fail := func(job string) []verdict { return []verdict{{CheckLimitRange, StatusFail, "tfjob team-a/" + job}} }
	fine := []verdict{{CheckLimitRange, StatusOK, ""}}
	maxRefusal := `creating pod j-worker-0: pods "j-worker-0" is forbidden: maximum cpu usage per Container is 1, but limit is 2`
	cases := map[string]admissionCase{
		"above the maximum": {
			job:          makeJob("big").workers(1, "cpu", "8").obj(),
			ranges:       []corev1.LimitRange{limitRange("limits", corev1.LimitRangeItem{Max: resources("cpu", "4")})},
			want:         fail("big"),
			wantFindings: []string{"LimitRange limits: the maximum cpu per Container is 4, but worker container tensorflow has a cpu limit of 8"},
			wantFix:      []string{"set resources.limits.cpu of worker container tensorflow to at most 4 in the job's template (kubectl edit tfjob big -n team-a), or ask the namespace's owner to raise the max of LimitRange limits"},
		},
		"below the minimum": {
			job:          makeJob("small").workers(1, "memory", "64Mi").obj(),
			ranges:       []corev1.LimitRange{limitRange("limits", corev1.LimitRangeItem{Min: resources("memory", "1Gi")})},
			want:         fail("small"),
			wantFindings: []string{"the minimum memory per Container is 1Gi, but worker container tensorflow has a memory request of 64Mi"},
		},
		"a request above the default limit": {
			job:          makeJob("nolimit").workers(1).workerResources(resources("cpu", "4"), nil).obj(),
			ranges:       []corev1.LimitRange{limitRange("limits", corev1.LimitRangeItem{Default: resources("cpu", "2")})},
			want:         fail("nolimit"),
			wantFindings: []string{"LimitRange limits: worker container tensorflow gets the default cpu limit 2, below its request of 4"},
		},
		"a limit too far above the request": {
			job:          makeJob("bursty").workers(1).workerResources(resources("cpu", "1"), resources("cpu", "8")).obj(),
			ranges:       []corev1.LimitRange{limitRange("ratio", corev1.LimitRangeItem{MaxLimitRequestRatio: resources("cpu", "4")})},
			want:         fail("bursty"),
			wantFindings: []string{"LimitRange ratio: the cpu limit per Container may be at most 4 times the request, but worker container tensorflow's is 8 times"},
		},
		"a Pod maximum over the sum of the containers": {
			job: func() kubeflowv1.TFJob {
				j := makeJob("pair").workers(1, "cpu", "3").obj()
				spec := &j.Spec.TFReplicaSpecs[kubeflowv1.ReplicaTypeWorker].Template.Spec
				spec.Containers = append(spec.Containers, corev1.Container{Name: "sidecar", Resources: spec.Containers[0].Resources})
				return j
			}(),
			ranges:       []corev1.LimitRange{limitRange("pods", corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: resources("cpu", "4")})},
			want:         fail("pair"),
			wantFindings: []string{"LimitRange pods: the maximum cpu per Pod is 4, but the worker pod (all its containers) has a cpu limit of 6"},
		},
		"within the range": {
			job:    makeJob("fits").workers(1, "cpu", "2").obj(),
			ranges: []corev1.LimitRange{limitRange("limits", corev1.LimitRangeItem{Max: resources("cpu", "4"), Min: resources("cpu", "1")})},
			want:   fine,
		},
		"reclaimed: the operator raises the zero request to the minimum and the ratio": {
			job: reclaimedJob,
			ranges: []corev1.LimitRange{limitRange("limits", corev1.LimitRangeItem{
				Min: resources("cpu", "100m", "memory", "64Mi"), MaxLimitRequestRatio: resources("cpu", "10", "memory", "4"),
			})},
			reclaim: true,
			want:    fine,
		},
		"reclaimed: a maximum the template's limit exceeds": {
			job:          reclaimedJob,
			ranges:       []corev1.LimitRange{limitRange("small", corev1.LimitRangeItem{Max: resources("cpu", "1")})},
			reclaim:      true,
			want:         fail("j"),
			wantFindings: []string{"LimitRange small: the maximum cpu per Container is 1, but worker container tensorflow has a cpu limit of 2"},
		},
		"the apiserver's refusal names the LimitRange's rule": {
			job:          reclaimedJob,
			ranges:       []corev1.LimitRange{limitRange("small", corev1.LimitRangeItem{Max: resources("cpu", "1")})},
			events:       []corev1.Event{refused(reclaimedJob, 2*time.Minute, maxRefusal)},
			reclaim:      true,
			want:         fail("j"),
			wantFindings: []string{"1 of 1 pod(s) not created (the apiserver refused pod j-worker-0 2m ago): LimitRange small: the maximum cpu per Container is 1"},
		},
		"the apiserver's refusal by a LimitRange widened since": {
			job:          reclaimedJob,
			ranges:       []corev1.LimitRange{limitRange("small", corev1.LimitRangeItem{Max: resources("cpu", "4")})},
			events:       []corev1.Event{refused(reclaimedJob, 2*time.Minute, maxRefusal)},
			reclaim:      true,
			want:         []verdict{{CheckLimitRange, StatusWarn, "tfjob team-a/j"}},
			wantFindings: []string{"a LimitRange: the maximum cpu per Container is 1, but a container of the worker pod has a cpu limit of 2; no LimitRange of the namespace has that rule now"},
			wantFix:      []string{"nothing, if the operator's next try creates the pods"},
		},
		"the apiserver's default-limit refusal, resolved to the container": {
			job:          makeJob("nolimit").workers(1).workerResources(resources("cpu", "4"), nil).obj(),
			ranges:       []corev1.LimitRange{limitRange("defaults", corev1.LimitRangeItem{Default: resources("cpu", "2")})},
			events:       []corev1.Event{refused(makeJob("nolimit").obj(), time.Minute, `creating pod nolimit-worker-0: Pod "nolimit-worker-0" is invalid: spec.containers[0].resources.requests: Invalid value: "4": must be less than or equal to cpu limit of 2`)},
			want:         fail("nolimit"),
			wantFindings: []string{"(the apiserver refused pod nolimit-worker-0 60s ago): LimitRange defaults: worker container tensorflow gets the default cpu limit 2, below its request of 4"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { tc.run(t, checkLimitRange) })
	}
}

func TestCheckPodCreate(t *testing.T) {
	job := makeJob("j").workers(1, "cpu", "1").obj()
	cases := map[string]admissionCase{
		"Pod Security": {
			job:          job,
			events:       []corev1.Event{refused(job, time.Minute, `creating pod j-worker-0: pods "j-worker-0" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "tensorflow" must set securityContext.runAsNonRoot=true)`)},
			want:         []verdict{{CheckPodCreate, StatusFail, "tfjob team-a/j"}},
			wantFindings: []string{"1 of 1 pod(s) not created (the apiserver refused pod j-worker-0 60s ago): pods \"j-worker-0\" is forbidden: violates PodSecurity"},
			wantFix:      []string{"Pod Security level", "pod-security.kubernetes.io/enforce"},
		},
		"a request over the template's own limit is no LimitRange's": {
			job:          job,
			events:       []corev1.Event{refused(job, time.Minute, `Pod "j-worker-0" is invalid: spec.containers[0].resources.requests: Invalid value: "4": must be less than or equal to cpu limit of 2`)},
			want:         []verdict{{CheckPodCreate, StatusFail, "tfjob team-a/j"}},
			wantFix:      []string{"correct the field the message names"},
			wantFindings: []string{"must be less than or equal to cpu limit of 2"},
		},
		"a quota refusal is resource-quota's": {
			job:    job,
			quotas: []corev1.ResourceQuota{quota("team", resources("limits.cpu", "1"), resources("limits.cpu", "1"))},
			events: []corev1.Event{refused(job, time.Minute, `pods "j-worker-0" is forbidden: exceeded quota: team, requested: limits.cpu=1, used: limits.cpu=1, limited: limits.cpu=1`)},
			want:   []verdict{{CheckPodCreate, StatusOK, ""}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { tc.run(t, checkPodCreate) })
	}
}
