package tfjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

func TestPlanGang(t *testing.T) {
	type want struct {
		CreatePodGroup, GangPods bool
		Events                   []string
	}
	distributed := makeJob("j").replicas(PS, 1, Never).replicas(Worker, 3, Never)
	cases := map[string]struct {
		job      *kubeflowv1.TFJob
		pods     []*corev1.Pod
		podGroup bool
		gang     colocation.GangScheduler
		want     want
	}{
		"a new distributed job starts as a gang": {
			job: distributed.obj(), gang: colocation.GangKubernetes,
			want: want{CreatePodGroup: true, GangPods: true},
		},
		"an existing PodGroup is reused": {
			job: makeJob("j").replicas(Worker, 2, Never).obj(), gang: colocation.GangKubernetes, podGroup: true,
			want: want{GangPods: true},
		},
		"a replacement beside running pods does not wait for a gang": {
			job:  makeJob("j").replicas(Worker, 2, OnFailure).started(ago(time.Minute)).condition(kubeflowv1.JobCreated, corev1.ConditionTrue, reasonCreated, ago(time.Minute)).obj(),
			pods: podList(bound(runningPod(Worker, 1))), gang: colocation.GangKubernetes, podGroup: true,
			want: want{},
		},
		"a replacement beside a pending pod outside the gang does not wait for a gang": {
			job:  makeJob("j").replicas(Worker, 2, OnFailure).started(ago(time.Minute)).condition(kubeflowv1.JobCreated, corev1.ConditionTrue, reasonCreated, ago(time.Minute)).obj(),
			pods: podList(unbound(runningPod(Worker, 1), "")), gang: colocation.GangKubernetes, podGroup: true,
			want: want{},
		},
		"the rest of a half-created gang joins it": {
			job:  makeJob("j").replicas(Worker, 2, Never).obj(),
			pods: podList(unbound(runningPod(Worker, 1), "j")), gang: colocation.GangKubernetes, podGroup: true,
			want: want{GangPods: true},
		},
		"replicas of different priorities cannot form a gang": {
			job: withTemplateClass(distributed.obj(), PS, "gold"), gang: colocation.GangKubernetes,
			want: want{Events: []string{"Warning/GangSchedulingUnavailable"}},
		},
		"a single replica needs no gang": {
			job: makeJob("j").replicas(Worker, 1, Never).obj(), gang: colocation.GangKubernetes,
			want: want{},
		},
		"Volcano places replacements in the gang too": {
			job:  makeJob("j").replicas(Worker, 2, OnFailure).started(ago(time.Minute)).condition(kubeflowv1.JobCreated, corev1.ConditionTrue, reasonCreated, ago(time.Minute)).obj(),
			pods: podList(bound(runningPod(Worker, 1))), gang: colocation.GangVolcano, podGroup: true,
			want: want{GangPods: true},
		},
		"without PodGroups the job is told, not pretended to": {
			job:  distributed.obj(),
			want: want{Events: []string{"Warning/GangSchedulingUnavailable"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := observe(tc.job, tc.pods...)
			obs.hasPodGroup = tc.podGroup
			p := planPass(tc.job, obs, testNow, policy{defaultCleanPodPolicy: kubeflowv1.CleanPodPolicyRunning, gang: tc.gang, offlinePriorityClass: "backfill-offline"})
			got := want{CreatePodGroup: p.createPodGroup, GangPods: p.gangPods, Events: summarisePlan(tc.job, p).Events}
			if diff := cmp.Diff(tc.want, got, cmpOpts...); diff != "" {
				t.Errorf("gang plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodGroupFor(t *testing.T) {
	cases := map[string]struct {
		job  *kubeflowv1.TFJob
		want int32
	}{
		"every replica by default":                  {job: makeJob("j").replicas(Chief, 1, Never).replicas(PS, 2, Never).replicas(Worker, 4, Never).obj(), want: 7},
		"minAvailable when smaller":                 {job: withMinAvailable(makeJob("j").replicas(Worker, 4, Never).obj(), 2), want: 2},
		"minAvailable above the total is the total": {job: withMinAvailable(makeJob("j").replicas(Worker, 4, Never).obj(), 9), want: 4},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pg := podGroupFor(tc.job, "backfill-offline", colocation.GangKubernetes).(*schedulingv1beta1.PodGroup)
			if pg.Name != "j" || pg.Spec.SchedulingPolicy.Gang == nil || pg.Spec.SchedulingPolicy.Gang.MinCount != tc.want {
				t.Errorf("PodGroup %s gang %+v, want name j and minCount %d", pg.Name, pg.Spec.SchedulingPolicy.Gang, tc.want)
			}
			if len(pg.OwnerReferences) != 1 || pg.OwnerReferences[0].Controller == nil || !*pg.OwnerReferences[0].Controller {
				t.Errorf("PodGroup owners = %v, want the job as controller", pg.OwnerReferences)
			}
		})
	}
}

func TestPodPriorityAndGrace(t *testing.T) {
	grace := int64(60)
	cases := map[string]struct {
		job       *kubeflowv1.TFJob
		template  string
		wantClass string
	}{
		"the offline class by default":            {job: makeJob("j").replicas(Worker, 1, Never).obj(), wantClass: "backfill-offline"},
		"the template's class wins over it":       {job: makeJob("j").replicas(Worker, 1, Never).obj(), template: "gold", wantClass: "gold"},
		"schedulingPolicy.priorityClass wins all": {job: makeJob("j").replicas(Worker, 1, Never).priorityClass("batch").obj(), template: "gold", wantClass: "batch"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.job.Spec.TFReplicaSpecs[Worker].Template.Spec.PriorityClassName = tc.template
			pod, err := podFor(tc.job, Worker, 0, podOptions{offlinePriorityClass: "backfill-offline", gracePeriod: &grace, podGroup: "j", gang: colocation.GangKubernetes})
			if err != nil {
				t.Fatal(err)
			}
			if pod.Spec.PriorityClassName != tc.wantClass {
				t.Errorf("priorityClassName = %q, want %q", pod.Spec.PriorityClassName, tc.wantClass)
			}
			if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || *g != 60 {
				t.Errorf("terminationGracePeriodSeconds = %v, want 60", g)
			}
			if sg := pod.Spec.SchedulingGroup; sg == nil || sg.PodGroupName == nil || *sg.PodGroupName != "j" {
				t.Errorf("schedulingGroup = %+v, want podGroupName j", sg)
			}
		})
	}
	t.Run("the template's grace period wins", func(t *testing.T) {
		job := makeJob("j").replicas(Worker, 1, Never).obj()
		job.Spec.TFReplicaSpecs[Worker].Template.Spec.TerminationGracePeriodSeconds = ptr(int64(5))
		pod, err := podFor(job, Worker, 0, podOptions{gracePeriod: &grace})
		if err != nil {
			t.Fatal(err)
		}
		if *pod.Spec.TerminationGracePeriodSeconds != 5 {
			t.Errorf("terminationGracePeriodSeconds = %d, want the template's 5", *pod.Spec.TerminationGracePeriodSeconds)
		}
	})
}

func TestPlanPriorityClassNotFound(t *testing.T) {
	job := makeJob("j").replicas(Worker, 2, Never).priorityClass("nope").obj()
	obs := observe(job)
	obs.missingPriorityClasses = []string{"nope"}
	p := planPass(job, obs, testNow, defaultPolicy)
	if diff := cmp.Diff([]string{"Created=False/PriorityClassNotFound"}, summariseStatus(p.status).Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if len(p.createPods) != 0 || p.status.StartTime != nil {
		t.Errorf("Planned %d pods and startTime %v for a job whose PriorityClass is missing", len(p.createPods), p.status.StartTime)
	}
	if diff := cmp.Diff([]string{"Warning/PriorityClassNotFound"}, summarisePlan(job, p).Events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	job.Status = p.status
	again := planPass(job, obs, testNow.Add(time.Second), defaultPolicy)
	if len(again.events) != 0 {
		t.Errorf("A second pass repeated the event: %v", summarisePlan(job, again).Events)
	}
	resolved := planPass(job, observe(job), testNow.Add(2*time.Second), defaultPolicy)
	if got := summariseStatus(resolved.status).Conditions; len(got) != 1 || got[0] != "Created=True/TFJobCreated" || len(resolved.createPods) != 2 {
		t.Errorf("Once the class exists: conditions %v, %d pods planned; want Created=True and 2 pods", got, len(resolved.createPods))
	}
}

func withMinAvailable(job *kubeflowv1.TFJob, n int32) *kubeflowv1.TFJob {
	if job.Spec.RunPolicy.SchedulingPolicy == nil {
		job.Spec.RunPolicy.SchedulingPolicy = &kubeflowv1.SchedulingPolicy{}
	}
	job.Spec.RunPolicy.SchedulingPolicy.MinAvailable = &n
	return job
}

func withTemplateClass(job *kubeflowv1.TFJob, rtype kubeflowv1.ReplicaType, class string) *kubeflowv1.TFJob {
	job = job.DeepCopy()
	job.Spec.TFReplicaSpecs[rtype].Template.Spec.PriorityClassName = class
	return job
}

// unbound makes pod a pending one, a member of group unless it is empty.
func unbound(pod *corev1.Pod, group string) *corev1.Pod {
	pod.Status.Phase = corev1.PodPending
	if group != "" {
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group}
	}
	return pod
}

func bound(pod *corev1.Pod) *corev1.Pod {
	pod.Spec.NodeName = "node-1"
	return pod
}

// The other gang schedulers get their own PodGroup and pod markings.
func TestGangSchedulers(t *testing.T) {
	queue := "research"
	timeout := int32(120)
	job := withMinAvailable(makeJob("j").replicas(PS, 1, Never).replicas(Worker, 3, Never).obj(), 3)
	job.Spec.RunPolicy.SchedulingPolicy.Queue = queue
	job.Spec.RunPolicy.SchedulingPolicy.ScheduleTimeoutSeconds = &timeout
	cases := map[string]struct {
		gang                        colocation.GangScheduler
		wantAPIVersion              string
		wantSpec                    map[string]any
		wantAnnotations, wantLabels map[string]string
		wantScheduler               string
	}{
		"volcano": {
			gang: colocation.GangVolcano, wantAPIVersion: "scheduling.volcano.sh/v1beta1",
			wantSpec:        map[string]any{"minMember": int64(3), "queue": "research", "priorityClassName": "backfill-offline"},
			wantAnnotations: map[string]string{"scheduling.k8s.io/group-name": "j"},
			wantScheduler:   "volcano",
		},
		"scheduler-plugins": {
			gang: colocation.GangSchedulerPlugins, wantAPIVersion: "scheduling.x-k8s.io/v1alpha1",
			wantSpec:      map[string]any{"minMember": int64(3), "scheduleTimeoutSeconds": int64(120)},
			wantLabels:    map[string]string{"scheduling.x-k8s.io/pod-group": "j"},
			wantScheduler: "sp-scheduler",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pg := podGroupFor(job, "backfill-offline", tc.gang).(*unstructured.Unstructured)
			if pg.GetAPIVersion() != tc.wantAPIVersion || pg.GetKind() != "PodGroup" || pg.GetName() != "j" {
				t.Errorf("PodGroup %s %s %s, want %s PodGroup j", pg.GetAPIVersion(), pg.GetKind(), pg.GetName(), tc.wantAPIVersion)
			}
			if diff := cmp.Diff(tc.wantSpec, pg.Object["spec"]); diff != "" {
				t.Errorf("PodGroup spec (-want +got):\n%s", diff)
			}
			pod, err := podFor(job, Worker, 0, podOptions{podGroup: "j", gang: tc.gang, gangSchedulerName: "sp-scheduler"})
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.wantAnnotations {
				if pod.Annotations[k] != v {
					t.Errorf("pod annotation %s = %q, want %q", k, pod.Annotations[k], v)
				}
			}
			for k, v := range tc.wantLabels {
				if pod.Labels[k] != v {
					t.Errorf("pod label %s = %q, want %q", k, pod.Labels[k], v)
				}
			}
			if pod.Spec.SchedulerName != tc.wantScheduler || pod.Spec.SchedulingGroup != nil {
				t.Errorf("pod schedulerName %q, schedulingGroup %v; want %q and none", pod.Spec.SchedulerName, pod.Spec.SchedulingGroup, tc.wantScheduler)
			}
		})
	}
}
