package tfjob

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// TestPlanPassRetiresKeptSucceededPods: a succeeded pod leaves the cache
// with its release unless cleanPodPolicy All will delete it; no other pod
// is ever retired.
func TestPlanPassRetiresKeptSucceededPods(t *testing.T) {
	running := func(clean kubeflowv1.CleanPodPolicy) *kubeflowv1.TFJob {
		return makeJob("j").replicas(Chief, 1, Never).replicas(Worker, 2, Never).cleanPodPolicy(clean).obj()
	}
	finished := func(clean kubeflowv1.CleanPodPolicy) *kubeflowv1.TFJob {
		return makeJob("j").replicas(Chief, 1, Never).replicas(Worker, 2, Never).cleanPodPolicy(clean).
			finished(kubeflowv1.JobSucceeded, "TFJobSucceeded", ago(0)).obj()
	}
	cases := map[string]struct {
		job         *kubeflowv1.TFJob
		pods        []*corev1.Pod
		wantRelease []string
		wantRetire  []string
	}{
		"a worker succeeded while the job runs": {
			job:         running(kubeflowv1.CleanPodPolicyRunning),
			pods:        podList(runningPod(Chief, 0), succeededPod(Worker, 0), runningPod(Worker, 1)),
			wantRelease: []string{"j-worker-0"}, wantRetire: []string{"j-worker-0"},
		},
		"cleanPodPolicy All deletes it when the job finishes": {
			job:         running(kubeflowv1.CleanPodPolicyAll),
			pods:        podList(runningPod(Chief, 0), succeededPod(Worker, 0), runningPod(Worker, 1)),
			wantRelease: []string{"j-worker-0"},
		},
		"the job finished: only succeeded pods are retired": {
			job:         finished(kubeflowv1.CleanPodPolicyNone),
			pods:        podList(succeededPod(Chief, 0), failedPod(Worker, 0, 1), runningPod(Worker, 1)),
			wantRelease: []string{"j-chief-0", "j-worker-0", "j-worker-1"}, wantRetire: []string{"j-chief-0"},
		},
		"the job finished under All": {
			job:         finished(kubeflowv1.CleanPodPolicyAll),
			pods:        podList(succeededPod(Chief, 0), succeededPod(Worker, 0)),
			wantRelease: []string{"j-chief-0", "j-worker-0"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := planPass(tc.job, observe(tc.job, tc.pods...), testNow, defaultPolicy)
			var retired []string
			for _, pod := range p.releasePods {
				if p.retirePods[pod.UID] {
					retired = append(retired, pod.Name)
				}
			}
			slices.Sort(retired)
			if diff := cmp.Diff(tc.wantRelease, podNames(p.releasePods), cmpOpts...); diff != "" {
				t.Errorf("released (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRetire, retired, cmpOpts...); diff != "" {
				t.Errorf("retired (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanPassRetiresDoneJobs: a finished job leaves the cache, with the
// pods and services it keeps, once a pass has nothing left to do for it;
// never while it may still change, or while its TTL will delete it.
func TestPlanPassRetiresDoneJobs(t *testing.T) {
	job := func(clean kubeflowv1.CleanPodPolicy) *jobBuilder {
		return makeJob("j").replicas(Chief, 1, Never).replicas(Worker, 2, Never).cleanPodPolicy(clean).
			finished(kubeflowv1.JobFailed, "TFJobFailed", ago(time.Minute))
	}
	released := func(pod *corev1.Pod) *corev1.Pod {
		pod.Finalizers = nil
		return pod
	}
	// A failed job under cleanPodPolicy None keeps a failed chief and two
	// workers that succeeded and were retired with their release.
	keptChief := func() *corev1.Pod { return released(failedPod(Chief, 0, 1)) }
	cases := map[string]struct {
		job *kubeflowv1.TFJob
		// settled: the job's status is what the last pass wrote.
		settled bool
		pods    []*corev1.Pod
		// podGroup: the job's gang PodGroup exists.
		podGroup bool
		// retireAfter is the policy's; wantRequeue the wait it asks for.
		retireAfter, wantRequeue time.Duration
		// wantKept are the names retired with the job; nil: not retired.
		wantKept []string
	}{
		"done: retired with the pod and services it keeps": {
			job: job(kubeflowv1.CleanPodPolicyNone).obj(), settled: true, pods: podList(keptChief()),
			wantKept: []string{"j-chief-0", "service j-chief-0", "service j-worker-0", "service j-worker-1"},
		},
		"done, with the gang's PodGroup": {
			job: job(kubeflowv1.CleanPodPolicyNone).obj(), settled: true, pods: podList(keptChief()), podGroup: true,
			wantKept: []string{"PodGroup j", "j-chief-0", "service j-chief-0", "service j-worker-0", "service j-worker-1"},
		},
		"done under cleanPodPolicy All: no pods or services left": {
			job: job(kubeflowv1.CleanPodPolicyAll).obj(), settled: true,
			wantKept: []string{},
		},
		"the pass that finishes it writes its status first": {
			job: job(kubeflowv1.CleanPodPolicyNone).obj(), pods: podList(keptChief()),
		},
		"a pod not yet released": {
			job: job(kubeflowv1.CleanPodPolicyNone).obj(), settled: true, pods: podList(failedPod(Chief, 0, 1)),
		},
		"a pod still stopping, which would change the counts": {
			job: job(kubeflowv1.CleanPodPolicyNone).obj(), settled: true,
			pods: podList(keptChief(), released(makePod(j, Worker, 0).phase(corev1.PodFailed).exitCode(1).deleting(ago(time.Second), 30).obj())),
		},
		"a pod kept running under cleanPodPolicy None": {
			job: job(kubeflowv1.CleanPodPolicyNone).obj(), settled: true,
			pods: podList(keptChief(), released(runningPod(Worker, 0))),
		},
		"finished a minute ago, kept for ten: back in nine": {
			job: job(kubeflowv1.CleanPodPolicyNone).obj(), settled: true, pods: podList(keptChief()),
			retireAfter: 10 * time.Minute, wantRequeue: 9 * time.Minute,
		},
		"finished a minute ago, kept for one: retired": {
			job: job(kubeflowv1.CleanPodPolicyNone).obj(), settled: true, pods: podList(keptChief()),
			retireAfter: time.Minute, wantKept: []string{"j-chief-0", "service j-chief-0", "service j-worker-0", "service j-worker-1"},
		},
		"ttlSecondsAfterFinished: the TTL deletes it instead": {
			job: job(kubeflowv1.CleanPodPolicyNone).ttl(3600).obj(), settled: true, pods: podList(keptChief()),
			wantRequeue: 59 * time.Minute,
		},
		"a job still running": {
			job:     makeJob("j").replicas(Chief, 1, Never).cleanPodPolicy(kubeflowv1.CleanPodPolicyNone).obj(),
			settled: true, pods: podList(released(runningPod(Chief, 0))),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := observe(tc.job, tc.pods...)
			obs.hasPodGroup = tc.podGroup
			if tc.job.Spec.RunPolicy.CleanPodPolicy != nil && *tc.job.Spec.RunPolicy.CleanPodPolicy == kubeflowv1.CleanPodPolicyAll {
				obs.services = map[string]*corev1.Service{}
			}
			pol := defaultPolicy
			pol.retireAfter = tc.retireAfter
			if tc.settled {
				tc.job.Status = planPass(tc.job, obs, testNow, pol).status
			}
			p := planPass(tc.job, obs, testNow, pol)
			if p.requeueAfter != tc.wantRequeue {
				t.Errorf("requeueAfter = %v, want %v", p.requeueAfter, tc.wantRequeue)
			}
			var kept []string
			for _, obj := range p.kept {
				name := obj.GetName()
				switch obj.(type) {
				case *corev1.Service:
					name = "service " + name
				case *schedulingv1beta1.PodGroup:
					name = "PodGroup " + name
				}
				kept = append(kept, name)
			}
			slices.Sort(kept)
			if tc.wantKept == nil {
				if p.retiring {
					t.Errorf("Retired, keeping %v; want not retired", kept)
				}
				return
			}
			if !p.retiring {
				t.Fatal("Not retired")
			}
			if diff := cmp.Diff(tc.wantKept, kept, cmpOpts...); diff != "" {
				t.Errorf("Retired with it (-want +got):\n%s", diff)
			}
		})
	}
}
