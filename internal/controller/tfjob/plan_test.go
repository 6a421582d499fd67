package tfjob

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

// defaultPolicy is the manager's default, as NewReconciler sets it.
var defaultPolicy = policy{defaultCleanPodPolicy: kubeflowv1.CleanPodPolicyRunning, gang: colocation.GangKubernetes, offlinePriorityClass: "backfill-offline"}

// j only names the pods of the jobs below, which are all called "j".
var j = makeJob("j").obj()

// runningPod, pendingPod, succeededPod and failedPod are pods of job j in that phase.
func runningPod(rtype kubeflowv1.ReplicaType, i int) *corev1.Pod {
	return makePod(j, rtype, i).phase(corev1.PodRunning).obj()
}

func pendingPod(rtype kubeflowv1.ReplicaType, i int) *corev1.Pod {
	return makePod(j, rtype, i).obj()
}

func succeededPod(rtype kubeflowv1.ReplicaType, i int) *corev1.Pod {
	return makePod(j, rtype, i).phase(corev1.PodSucceeded).exitCode(0).obj()
}

func failedPod(rtype kubeflowv1.ReplicaType, i int, code int32) *corev1.Pod {
	return makePod(j, rtype, i).phase(corev1.PodFailed).exitCode(code).obj()
}

func podList(pods ...*corev1.Pod) []*corev1.Pod { return pods }

var cmpOpts = []cmp.Option{cmpopts.EquateEmpty()}

func TestNewReconcilerDefaultsCleanPodPolicyToRunning(t *testing.T) {
	cases := map[string]struct {
		opts Options
		want kubeflowv1.CleanPodPolicy
	}{
		"unset is Running": {opts: Options{}, want: kubeflowv1.CleanPodPolicyRunning},
		"None is kept":     {opts: Options{DefaultCleanPodPolicy: kubeflowv1.CleanPodPolicyNone}, want: kubeflowv1.CleanPodPolicyNone},
		"All is kept":      {opts: Options{DefaultCleanPodPolicy: kubeflowv1.CleanPodPolicyAll}, want: kubeflowv1.CleanPodPolicyAll},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := NewReconciler(nil, nil, nil, tc.opts)
			if diff := cmp.Diff(tc.want, r.opts.DefaultCleanPodPolicy); diff != "" {
				t.Errorf("DefaultCleanPodPolicy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanPass(t *testing.T) {
	allWorkers := kubeflowv1.SuccessPolicyAllWorkers
	cases := map[string]struct {
		job        *kubeflowv1.TFJob
		pods       []*corev1.Pod
		noServices bool
		takenPods  []string
		takenSvcs  []string
		pol        *policy
		wantStatus statusSummary
		wantPlan   planSummary
	}{
		// Start.
		"new job is created and plans every pod and service": {
			job:        makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).obj(),
			noServices: true,
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated"},
				StartTime:  rfc(testNow),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{PS: {}, Worker: {}},
			},
			wantPlan: planSummary{
				CreatePods:     []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				CreateServices: []string{"j-ps-0", "j-worker-0", "j-worker-1"},
			},
		},
		"pending pods are not running and keep startTime": {
			job:  makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).started(ago(10 * time.Second)).obj(),
			pods: podList(pendingPod(PS, 0), pendingPod(Worker, 0), pendingPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated"},
				StartTime:  rfc(ago(10 * time.Second)),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{PS: {}, Worker: {}},
			},
		},
		"a running worker makes the job Running": {
			job:  makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).started(ago(time.Minute)).obj(),
			pods: podList(runningPod(PS, 0), runningPod(Worker, 0), pendingPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated", "Running=True/TFJobRunning"},
				StartTime:  rfc(ago(time.Minute)),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{PS: {Active: 1}, Worker: {Active: 1}},
			},
		},
		"a running PS alone does not make the job Running": {
			job:  makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).started(ago(time.Minute)).obj(),
			pods: podList(runningPod(PS, 0), pendingPod(Worker, 0), pendingPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated"},
				StartTime:  rfc(ago(time.Minute)),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{PS: {Active: 1}, Worker: {}},
			},
		},
		"with a chief only the running chief makes the job Running": {
			job:  makeJob("j").replicas(Chief, 1, Never).replicas(Worker, 1, Never).started(ago(time.Minute)).obj(),
			pods: podList(runningPod(Chief, 0), pendingPod(Worker, 0)),
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated", "Running=True/TFJobRunning"},
				StartTime:  rfc(ago(time.Minute)),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{Chief: {Active: 1}, Worker: {}},
			},
		},
		"Running replaces Restarting once the pods run again": {
			job: makeJob("j").replicas(Worker, 2, OnFailure).started(ago(time.Minute)).
				condition(kubeflowv1.JobRestarting, corev1.ConditionTrue, reasonRestarting, ago(30*time.Second)).obj(),
			pods: podList(runningPod(Worker, 0), runningPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated", "Running=True/TFJobRunning"},
				StartTime:  rfc(ago(time.Minute)),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 2}},
			},
		},
		"names held by objects of others are not created": {
			job:        makeJob("j").replicas(Worker, 2, Never).obj(),
			noServices: true, takenPods: []string{"j-worker-1"}, takenSvcs: []string{"j-worker-0"},
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated"},
				StartTime:  rfc(testNow),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
			},
			wantPlan: planSummary{CreatePods: []string{"j-worker-0"}, CreateServices: []string{"j-worker-1"}},
		},

		// Success.
		"chief success finishes the job and deletes running pods under the default Running policy": {
			job: makeJob("j").replicas(Chief, 1, ExitCode).replicas(PS, 1, Never).replicas(Worker, 2, OnFailure).
				started(ago(5*time.Minute)).condition(kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, ago(4*time.Minute)).obj(),
			pods: podList(succeededPod(Chief, 0), runningPod(PS, 0), runningPod(Worker, 0), runningPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Running=False/TFJobRunning", "Succeeded=True/TFJobSucceeded"},
				StartTime:      rfc(ago(5 * time.Minute)),
				CompletionTime: rfc(testNow),
				Replicas: map[kubeflowv1.ReplicaType]replicaSummary{
					Chief: {Succeeded: 1, SucceededIndexes: []int32{0}}, PS: {}, Worker: {},
				},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				ReleasePods:    []string{"j-chief-0", "j-ps-0", "j-worker-0", "j-worker-1"},
				DeleteServices: []string{"j-chief-0", "j-ps-0", "j-worker-0", "j-worker-1"},
				Events:         []string{"Normal/TFJobSucceeded"},
			},
		},
		"worker 0 success finishes a job without chief": {
			job: makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).
				started(ago(5*time.Minute)).condition(kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, ago(4*time.Minute)).obj(),
			pods: podList(runningPod(PS, 0), succeededPod(Worker, 0), runningPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Running=False/TFJobRunning", "Succeeded=True/TFJobSucceeded"},
				StartTime:      rfc(ago(5 * time.Minute)),
				CompletionTime: rfc(testNow),
				Replicas: map[kubeflowv1.ReplicaType]replicaSummary{
					PS: {}, Worker: {Succeeded: 1, SucceededIndexes: []int32{0}},
				},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-ps-0", "j-worker-1"},
				ReleasePods:    []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				DeleteServices: []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				Events:         []string{"Normal/TFJobSucceeded"},
			},
		},
		"worker 1 success alone does not finish a job without chief": {
			job:  makeJob("j").replicas(Worker, 2, Never).started(ago(time.Minute)).obj(),
			pods: podList(runningPod(Worker, 0), succeededPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated", "Running=True/TFJobRunning"},
				StartTime:  rfc(ago(time.Minute)),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 1, Succeeded: 1, SucceededIndexes: []int32{1}}},
			},
			wantPlan: planSummary{ReleasePods: []string{"j-worker-1"}},
		},
		"worker 0 success does not finish a job with a chief": {
			job:  makeJob("j").replicas(Chief, 1, Never).replicas(Worker, 2, Never).started(ago(time.Minute)).obj(),
			pods: podList(runningPod(Chief, 0), succeededPod(Worker, 0), runningPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated", "Running=True/TFJobRunning"},
				StartTime:  rfc(ago(time.Minute)),
				Replicas: map[kubeflowv1.ReplicaType]replicaSummary{
					Chief: {Active: 1}, Worker: {Active: 1, Succeeded: 1, SucceededIndexes: []int32{0}},
				},
			},
			wantPlan: planSummary{ReleasePods: []string{"j-worker-0"}},
		},
		"AllWorkers waits for every worker": {
			job:  makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).successPolicy(allWorkers).started(ago(time.Minute)).obj(),
			pods: podList(runningPod(PS, 0), succeededPod(Worker, 0), runningPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated", "Running=True/TFJobRunning"},
				StartTime:  rfc(ago(time.Minute)),
				Replicas: map[kubeflowv1.ReplicaType]replicaSummary{
					PS: {Active: 1}, Worker: {Active: 1, Succeeded: 1, SucceededIndexes: []int32{0}},
				},
			},
			wantPlan: planSummary{ReleasePods: []string{"j-worker-0"}},
		},
		"AllWorkers succeeds when every worker has": {
			job:  makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).successPolicy(allWorkers).started(ago(time.Minute)).obj(),
			pods: podList(runningPod(PS, 0), succeededPod(Worker, 0), succeededPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Succeeded=True/TFJobSucceeded"},
				StartTime:      rfc(ago(time.Minute)),
				CompletionTime: rfc(testNow),
				Replicas: map[kubeflowv1.ReplicaType]replicaSummary{
					PS: {}, Worker: {Succeeded: 2, SucceededIndexes: []int32{0, 1}},
				},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-ps-0"},
				ReleasePods:    []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				DeleteServices: []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				Events:         []string{"Normal/TFJobSucceeded"},
			},
		},
		"AllWorkers counts a worker that succeeded in an earlier pass and whose pod is gone": {
			job: makeJob("j").replicas(Worker, 2, Never).successPolicy(allWorkers).started(ago(time.Minute)).
				succeededIndexes(Worker, 1).obj(),
			pods: podList(succeededPod(Worker, 0)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Succeeded=True/TFJobSucceeded"},
				StartTime:      rfc(ago(time.Minute)),
				CompletionTime: rfc(testNow),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Succeeded: 2, SucceededIndexes: []int32{0, 1}}},
			},
			wantPlan: planSummary{
				ReleasePods:    []string{"j-worker-0"},
				DeleteServices: []string{"j-worker-0", "j-worker-1"},
				Events:         []string{"Normal/TFJobSucceeded"},
			},
		},
		"a succeeded replica whose pod disappeared is not recreated": {
			job: makeJob("j").replicas(Chief, 1, Never).replicas(Worker, 2, OnFailure).started(ago(time.Minute)).
				succeededIndexes(Worker, 1).obj(),
			pods: podList(runningPod(Chief, 0), runningPod(Worker, 0)),
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated", "Running=True/TFJobRunning"},
				StartTime:  rfc(ago(time.Minute)),
				Replicas: map[kubeflowv1.ReplicaType]replicaSummary{
					Chief: {Active: 1}, Worker: {Active: 1, Succeeded: 1, SucceededIndexes: []int32{1}},
				},
			},
		},

		// Failure.
		"a failed pod under Never fails the job": {
			job: makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).
				started(ago(5*time.Minute)).condition(kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, ago(4*time.Minute)).obj(),
			pods: podList(runningPod(PS, 0), runningPod(Worker, 0), failedPod(Worker, 1, 1)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Running=False/TFJobRunning", "Failed=True/TFJobFailed"},
				StartTime:      rfc(ago(5 * time.Minute)),
				CompletionTime: rfc(testNow),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{PS: {}, Worker: {Failed: 1}},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-ps-0", "j-worker-0"},
				ReleasePods:    []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				DeleteServices: []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				Events:         []string{"Warning/TFJobFailed"},
			},
		},
		"a failed PS under Never fails the job even with enableDynamicWorker": {
			job:  makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).dynamicWorker().started(ago(time.Minute)).obj(),
			pods: podList(failedPod(PS, 0, 1), runningPod(Worker, 0), runningPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Failed=True/TFJobFailed"},
				StartTime:      rfc(ago(time.Minute)),
				CompletionTime: rfc(testNow),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{PS: {Failed: 1}, Worker: {}},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-worker-0", "j-worker-1"},
				ReleasePods:    []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				DeleteServices: []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				Events:         []string{"Warning/TFJobFailed"},
			},
		},
		"enableDynamicWorker tolerates a failed worker": {
			job:  makeJob("j").replicas(PS, 1, Never).replicas(Worker, 3, Never).dynamicWorker().started(ago(time.Minute)).obj(),
			pods: podList(runningPod(PS, 0), runningPod(Worker, 0), runningPod(Worker, 1), failedPod(Worker, 2, 1)),
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated", "Running=True/TFJobRunning"},
				StartTime:  rfc(ago(time.Minute)),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{PS: {Active: 1}, Worker: {Active: 2, Failed: 1}},
			},
		},
		"ExitCode with a retryable exit code (137) restarts the replica": {
			job: makeJob("j").replicas(Worker, 2, ExitCode).
				started(ago(5*time.Minute)).condition(kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, ago(4*time.Minute)).obj(),
			pods: podList(runningPod(Worker, 0), failedPod(Worker, 1, 137)),
			wantStatus: statusSummary{
				Conditions:  []string{"Created=True/TFJobCreated", "Restarting=True/TFJobRestarting"},
				StartTime:   rfc(ago(5 * time.Minute)),
				Restarts:    1,
				CountedPods: []string{"uid-j-worker-1"},
				Replicas:    map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 1, Failed: 1}},
			},
			wantPlan: planSummary{
				DeletePods:  []string{"j-worker-1"},
				ReleasePods: []string{"j-worker-1"},
				Events:      []string{"Warning/TFJobRestarting"},
			},
		},
		"ExitCode with a permanent exit code (1) fails the job": {
			job: makeJob("j").replicas(Worker, 2, ExitCode).
				started(ago(5*time.Minute)).condition(kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, ago(4*time.Minute)).obj(),
			pods: podList(runningPod(Worker, 0), failedPod(Worker, 1, 1)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Running=False/TFJobRunning", "Failed=True/TFJobFailed"},
				StartTime:      rfc(ago(5 * time.Minute)),
				CompletionTime: rfc(testNow),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Failed: 1}},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-worker-0"},
				ReleasePods:    []string{"j-worker-0", "j-worker-1"},
				DeleteServices: []string{"j-worker-0", "j-worker-1"},
				Events:         []string{"Warning/TFJobFailed"},
			},
		},
		"OnFailure restarts a failed pod": {
			job:  makeJob("j").replicas(Worker, 2, OnFailure).started(ago(time.Minute)).obj(),
			pods: podList(runningPod(Worker, 0), failedPod(Worker, 1, 1)),
			wantStatus: statusSummary{
				Conditions:  []string{"Created=True/TFJobCreated", "Restarting=True/TFJobRestarting"},
				StartTime:   rfc(ago(time.Minute)),
				Restarts:    1,
				CountedPods: []string{"uid-j-worker-1"},
				Replicas:    map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 1, Failed: 1}},
			},
			wantPlan: planSummary{
				DeletePods:  []string{"j-worker-1"},
				ReleasePods: []string{"j-worker-1"},
				Events:      []string{"Warning/TFJobRestarting"},
			},
		},
		"a recreated pod is charged with the in-place restarts of the pod it replaces": {
			job:  makeJob("j").replicas(Worker, 1, Always).started(ago(time.Minute)).restarts(1).obj(),
			pods: podList(makePod(j, Worker, 0).phase(corev1.PodFailed).exitCode(1).restarts(2).obj()),
			wantStatus: statusSummary{
				Conditions:  []string{"Created=True/TFJobCreated", "Restarting=True/TFJobRestarting"},
				StartTime:   rfc(ago(time.Minute)),
				Restarts:    4,
				CountedPods: []string{"uid-j-worker-0"},
				Replicas:    map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Failed: 1}},
			},
			wantPlan: planSummary{
				DeletePods:  []string{"j-worker-0"},
				ReleasePods: []string{"j-worker-0"},
				Events:      []string{"Warning/TFJobRestarting"},
			},
		},
		"backoffLimit 0 fails the job on a retryable failure": {
			job: makeJob("j").replicas(Worker, 2, OnFailure).backoffLimit(0).
				started(ago(5*time.Minute)).condition(kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, ago(4*time.Minute)).obj(),
			pods: podList(runningPod(Worker, 0), failedPod(Worker, 1, 1)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Running=False/TFJobRunning", "Failed=True/BackoffLimitExceeded"},
				StartTime:      rfc(ago(5 * time.Minute)),
				CompletionTime: rfc(testNow),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Failed: 1}},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-worker-0"},
				ReleasePods:    []string{"j-worker-0", "j-worker-1"},
				DeleteServices: []string{"j-worker-0", "j-worker-1"},
				Events:         []string{"Warning/BackoffLimitExceeded"},
			},
		},
		"backoffLimit counts the restarts of earlier passes": {
			job:  makeJob("j").replicas(Worker, 2, ExitCode).backoffLimit(2).started(ago(time.Minute)).restarts(2).obj(),
			pods: podList(runningPod(Worker, 0), failedPod(Worker, 1, 137)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Failed=True/BackoffLimitExceeded"},
				StartTime:      rfc(ago(time.Minute)),
				CompletionTime: rfc(testNow),
				Restarts:       2,
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Failed: 1}},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-worker-0"},
				ReleasePods:    []string{"j-worker-0", "j-worker-1"},
				DeleteServices: []string{"j-worker-0", "j-worker-1"},
				Events:         []string{"Warning/BackoffLimitExceeded"},
			},
		},
		"a restart within backoffLimit is allowed": {
			job:  makeJob("j").replicas(Worker, 2, ExitCode).backoffLimit(2).started(ago(time.Minute)).restarts(1).obj(),
			pods: podList(runningPod(Worker, 0), failedPod(Worker, 1, 137)),
			wantStatus: statusSummary{
				Conditions:  []string{"Created=True/TFJobCreated", "Restarting=True/TFJobRestarting"},
				StartTime:   rfc(ago(time.Minute)),
				Restarts:    2,
				CountedPods: []string{"uid-j-worker-1"},
				Replicas:    map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 1, Failed: 1}},
			},
			wantPlan: planSummary{
				DeletePods:  []string{"j-worker-1"},
				ReleasePods: []string{"j-worker-1"},
				Events:      []string{"Warning/TFJobRestarting"},
			},
		},
		"in-place container restarts above backoffLimit fail the job": {
			job: makeJob("j").replicas(Worker, 2, OnFailure).backoffLimit(2).
				started(ago(5*time.Minute)).condition(kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, ago(4*time.Minute)).obj(),
			pods: podList(makePod(j, Worker, 0).phase(corev1.PodRunning).restarts(2).obj(), makePod(j, Worker, 1).phase(corev1.PodRunning).restarts(1).obj()),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Running=False/TFJobRunning", "Failed=True/BackoffLimitExceeded"},
				StartTime:      rfc(ago(5 * time.Minute)),
				CompletionTime: rfc(testNow),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-worker-0", "j-worker-1"},
				ReleasePods:    []string{"j-worker-0", "j-worker-1"},
				DeleteServices: []string{"j-worker-0", "j-worker-1"},
				Events:         []string{"Warning/BackoffLimitExceeded"},
			},
		},
		"in-place container restarts up to backoffLimit are tolerated": {
			job:  makeJob("j").replicas(Worker, 2, OnFailure).backoffLimit(2).started(ago(time.Minute)).obj(),
			pods: podList(makePod(j, Worker, 0).phase(corev1.PodRunning).restarts(1).obj(), makePod(j, Worker, 1).phase(corev1.PodRunning).restarts(1).obj()),
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated", "Running=True/TFJobRunning"},
				StartTime:  rfc(ago(time.Minute)),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 2}},
			},
		},

		// Disruptions.
		"a preempted pod under Never is recreated as a disruption, not a failure": {
			job: makeJob("j").replicas(Worker, 2, Never).backoffLimit(0).
				started(ago(5*time.Minute)).condition(kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, ago(4*time.Minute)).obj(),
			pods: podList(runningPod(Worker, 0),
				makePod(j, Worker, 1).phase(corev1.PodFailed).exitCode(143).disruption(colocation.ReasonPreemptionByScheduler).obj()),
			wantStatus: statusSummary{
				Conditions:  []string{"Created=True/TFJobCreated", "Restarting=True/PreemptionByScheduler"},
				StartTime:   rfc(ago(5 * time.Minute)),
				Disruptions: 1,
				CountedPods: []string{"uid-j-worker-1"},
				Replicas:    map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 1, Failed: 1}},
			},
			wantPlan: planSummary{
				DeletePods:  []string{"j-worker-1"},
				ReleasePods: []string{"j-worker-1"},
				Events:      []string{"Warning/PreemptionByScheduler"},
			},
		},
		"a pod evicted by the kubelet under ExitCode with exit 1 is a disruption": {
			job: makeJob("j").replicas(Worker, 2, ExitCode).started(ago(time.Minute)).obj(),
			pods: podList(runningPod(Worker, 0),
				makePod(j, Worker, 1).phase(corev1.PodFailed).exitCode(1).statusReason("Evicted").obj()),
			wantStatus: statusSummary{
				Conditions:  []string{"Created=True/TFJobCreated", "Restarting=True/TerminationByKubelet"},
				StartTime:   rfc(ago(time.Minute)),
				Disruptions: 1,
				CountedPods: []string{"uid-j-worker-1"},
				Replicas:    map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 1, Failed: 1}},
			},
			wantPlan: planSummary{
				DeletePods:  []string{"j-worker-1"},
				ReleasePods: []string{"j-worker-1"},
				Events:      []string{"Warning/TerminationByKubelet"},
			},
		},
		"a running pod deleted by someone else is a disruption": {
			job: makeJob("j").replicas(Worker, 2, Never).started(ago(time.Minute)).obj(),
			pods: podList(runningPod(Worker, 0),
				makePod(j, Worker, 1).phase(corev1.PodRunning).deleting(ago(5*time.Second), 30).obj()),
			wantStatus: statusSummary{
				Conditions:  []string{"Created=True/TFJobCreated", "Restarting=True/DeletedWhileRunning"},
				StartTime:   rfc(ago(time.Minute)),
				Disruptions: 1,
				CountedPods: []string{"uid-j-worker-1"},
				Replicas:    map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 1}},
			},
			wantPlan: planSummary{
				ReleasePods: []string{"j-worker-1"},
				Events:      []string{"Warning/DeletedWhileRunning"},
			},
		},
		"a pod that failed after its deletion was asked for is a disruption": {
			job: makeJob("j").replicas(Worker, 2, Never).started(ago(time.Minute)).obj(),
			pods: podList(runningPod(Worker, 0),
				makePod(j, Worker, 1).phase(corev1.PodFailed).exitCodeAt(143, ago(5*time.Second)).deleting(ago(10*time.Second), 30).obj()),
			wantStatus: statusSummary{
				Conditions:  []string{"Created=True/TFJobCreated", "Restarting=True/DeletedWhileRunning"},
				StartTime:   rfc(ago(time.Minute)),
				Disruptions: 1,
				CountedPods: []string{"uid-j-worker-1"},
				Replicas:    map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 1, Failed: 1}},
			},
			wantPlan: planSummary{
				ReleasePods: []string{"j-worker-1"},
				Events:      []string{"Warning/DeletedWhileRunning"},
			},
		},
		"a pod that failed with exit 1 before its deletion was asked for stays a failure": {
			job: makeJob("j").replicas(Worker, 2, Never).started(ago(time.Minute)).obj(),
			pods: podList(runningPod(Worker, 0),
				makePod(j, Worker, 1).phase(corev1.PodFailed).exitCodeAt(1, ago(30*time.Second)).deleting(ago(10*time.Second), 30).obj()),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Failed=True/TFJobFailed"},
				StartTime:      rfc(ago(time.Minute)),
				CompletionTime: rfc(testNow),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Failed: 1}},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-worker-0"},
				ReleasePods:    []string{"j-worker-0", "j-worker-1"},
				DeleteServices: []string{"j-worker-0", "j-worker-1"},
				Events:         []string{"Warning/TFJobFailed"},
			},
		},

		// Run policy.
		"activeDeadlineSeconds passed fails the job": {
			job:  makeJob("j").replicas(Worker, 2, Never).deadline(60).started(ago(61 * time.Second)).obj(),
			pods: podList(runningPod(Worker, 0), runningPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Failed=True/DeadlineExceeded"},
				StartTime:      rfc(ago(61 * time.Second)),
				CompletionTime: rfc(testNow),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-worker-0", "j-worker-1"},
				ReleasePods:    []string{"j-worker-0", "j-worker-1"},
				DeleteServices: []string{"j-worker-0", "j-worker-1"},
				Events:         []string{"Warning/DeadlineExceeded"},
			},
		},
		"activeDeadlineSeconds reached to the second fails the job": {
			job:  makeJob("j").replicas(Worker, 1, Never).deadline(60).started(ago(60 * time.Second)).obj(),
			pods: podList(runningPod(Worker, 0)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Failed=True/DeadlineExceeded"},
				StartTime:      rfc(ago(60 * time.Second)),
				CompletionTime: rfc(testNow),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-worker-0"},
				ReleasePods:    []string{"j-worker-0"},
				DeleteServices: []string{"j-worker-0"},
				Events:         []string{"Warning/DeadlineExceeded"},
			},
		},
		"activeDeadlineSeconds not passed requeues for the remaining time": {
			job:  makeJob("j").replicas(Worker, 2, Never).deadline(60).started(ago(20 * time.Second)).obj(),
			pods: podList(runningPod(Worker, 0), runningPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated", "Running=True/TFJobRunning"},
				StartTime:  rfc(ago(20 * time.Second)),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 2}},
			},
			wantPlan: planSummary{RequeueAfter: 40 * time.Second},
		},
		"activeDeadlineSeconds of a new job counts from now": {
			job:        makeJob("j").replicas(Worker, 1, Never).deadline(600).obj(),
			noServices: true,
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated"},
				StartTime:  rfc(testNow),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
			},
			wantPlan: planSummary{
				CreatePods:     []string{"j-worker-0"},
				CreateServices: []string{"j-worker-0"},
				RequeueAfter:   600 * time.Second,
			},
		},
		"a finished job never plans pod creation": {
			job: makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).started(ago(time.Hour)).
				finished(kubeflowv1.JobSucceeded, reasonSucceeded, ago(time.Minute)).obj(),
			noServices: true,
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Succeeded=True/TFJobSucceeded"},
				StartTime:      rfc(ago(time.Hour)),
				CompletionTime: rfc(ago(time.Minute)),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{PS: {}, Worker: {}},
			},
		},
		"a failed job never plans pod creation, even with a restartable policy": {
			job: makeJob("j").replicas(Worker, 2, OnFailure).started(ago(time.Hour)).
				finished(kubeflowv1.JobFailed, reasonFailed, ago(time.Minute)).obj(),
			noServices: true, pods: podList(failedPod(Worker, 1, 1)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Failed=True/TFJobFailed"},
				StartTime:      rfc(ago(time.Hour)),
				CompletionTime: rfc(ago(time.Minute)),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
			},
			wantPlan: planSummary{ReleasePods: []string{"j-worker-1"}},
		},
		"ttlSecondsAfterFinished not due requeues for the remaining time": {
			job: makeJob("j").replicas(Worker, 1, Never).ttl(100).started(ago(time.Hour)).
				finished(kubeflowv1.JobSucceeded, reasonSucceeded, ago(30*time.Second)).obj(),
			noServices: true,
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Succeeded=True/TFJobSucceeded"},
				StartTime:      rfc(ago(time.Hour)),
				CompletionTime: rfc(ago(30 * time.Second)),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
			},
			wantPlan: planSummary{RequeueAfter: 70 * time.Second},
		},
		"ttlSecondsAfterFinished due deletes the job": {
			job: makeJob("j").replicas(Worker, 1, Never).ttl(100).started(ago(time.Hour)).
				finished(kubeflowv1.JobFailed, reasonFailed, ago(100*time.Second)).obj(),
			noServices: true,
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Failed=True/TFJobFailed"},
				StartTime:      rfc(ago(time.Hour)),
				CompletionTime: rfc(ago(100 * time.Second)),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
			},
			wantPlan: planSummary{DeleteJob: true, Events: []string{"Normal/TTLExpired"}},
		},
		"ttlSecondsAfterFinished of a running job does nothing": {
			job:  makeJob("j").replicas(Worker, 1, Never).ttl(1).started(ago(time.Hour)).obj(),
			pods: podList(runningPod(Worker, 0)),
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated", "Running=True/TFJobRunning"},
				StartTime:  rfc(ago(time.Hour)),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 1}},
			},
		},

		// Suspension.
		"suspend deletes every pod and service and clears startTime": {
			job: makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, OnFailure).suspend(true).
				started(ago(5*time.Minute)).condition(kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, ago(4*time.Minute)).obj(),
			pods: podList(runningPod(PS, 0), runningPod(Worker, 0), pendingPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions:  []string{"Created=True/TFJobCreated", "Running=False/TFJobRunning", "Suspended=True/TFJobSuspended"},
				CountedPods: []string{"uid-j-ps-0", "uid-j-worker-0", "uid-j-worker-1"},
				Replicas:    map[kubeflowv1.ReplicaType]replicaSummary{PS: {}, Worker: {}},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				ReleasePods:    []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				DeleteServices: []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				Events:         []string{"Normal/TFJobSuspended"},
			},
		},
		"a suspended job stays suspended without a new event": {
			job:        makeJob("j").replicas(Worker, 2, Never).suspend(true).started(ago(time.Hour)).suspendedAt(ago(time.Minute)).obj(),
			noServices: true, pods: podList(makePod(j, Worker, 0).phase(corev1.PodRunning).deleting(ago(time.Second), 30).obj()),
			wantStatus: statusSummary{
				Conditions:  []string{"Created=True/TFJobCreated", "Suspended=True/TFJobSuspended"},
				CountedPods: []string{"uid-j-worker-0"},
				Replicas:    map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
			},
			wantPlan: planSummary{ReleasePods: []string{"j-worker-0"}},
		},
		"resumed while the suspended pods still terminate: the operator stopped them, no disruption": {
			job: makeJob("j").replicas(Worker, 2, Never).suspend(false).suspendedAt(ago(time.Minute)).
				counted("uid-j-worker-0").obj(),
			pods: podList(makePod(j, Worker, 0).phase(corev1.PodRunning).deleting(ago(time.Second), 30).obj()),
			wantStatus: statusSummary{
				Conditions:  []string{"Suspended=False/TFJobResumed", "Created=True/TFJobCreated"},
				StartTime:   rfc(testNow),
				CountedPods: []string{"uid-j-worker-0"},
				Replicas:    map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
			},
			wantPlan: planSummary{
				CreatePods:  []string{"j-worker-1"},
				ReleasePods: []string{"j-worker-0"},
				Events:      []string{"Normal/TFJobResumed"},
			},
		},
		"a job that succeeds while a PS fails deletes and releases each pod once": {
			job: makeJob("j").replicas(Chief, 1, Never).replicas(PS, 1, OnFailure).cleanPodPolicy(kubeflowv1.CleanPodPolicyAll).
				started(ago(time.Minute)).obj(),
			pods: podList(succeededPod(Chief, 0), failedPod(PS, 0, 1)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Succeeded=True/TFJobSucceeded"},
				StartTime:      rfc(ago(time.Minute)),
				CompletionTime: rfc(testNow),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{Chief: {Succeeded: 1, SucceededIndexes: []int32{0}}, PS: {Failed: 1}},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-chief-0", "j-ps-0"},
				ReleasePods:    []string{"j-chief-0", "j-ps-0"},
				DeleteServices: []string{"j-chief-0", "j-ps-0"},
				Events:         []string{"Normal/TFJobSucceeded"},
			},
		},
		"a chief with no replicas leaves success to worker 0": {
			job:  makeJob("j").replicas(Chief, 0, Never).replicas(Worker, 2, Never).started(ago(time.Minute)).obj(),
			pods: podList(succeededPod(Worker, 0), runningPod(Worker, 1)),
			wantStatus: statusSummary{
				Conditions:     []string{"Created=True/TFJobCreated", "Succeeded=True/TFJobSucceeded"},
				StartTime:      rfc(ago(time.Minute)),
				CompletionTime: rfc(testNow),
				Replicas:       map[kubeflowv1.ReplicaType]replicaSummary{Chief: {}, Worker: {Succeeded: 1, SucceededIndexes: []int32{0}}},
			},
			wantPlan: planSummary{
				DeletePods:     []string{"j-worker-1"},
				ReleasePods:    []string{"j-worker-0", "j-worker-1"},
				DeleteServices: []string{"j-worker-0", "j-worker-1"},
				Events:         []string{"Normal/TFJobSucceeded"},
			},
		},
		"resume sets Suspended False and startTime again": {
			job: makeJob("j").replicas(PS, 1, Never).replicas(Worker, 2, Never).suspend(false).deadline(300).
				started(ago(time.Hour)).condition(kubeflowv1.JobRunning, corev1.ConditionTrue, reasonRunning, ago(time.Hour)).
				suspendedAt(ago(time.Minute)).obj(),
			noServices: true,
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated", "Running=False/TFJobRunning", "Suspended=False/TFJobResumed"},
				StartTime:  rfc(testNow),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{PS: {}, Worker: {}},
			},
			wantPlan: planSummary{
				CreatePods:     []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				CreateServices: []string{"j-ps-0", "j-worker-0", "j-worker-1"},
				RequeueAfter:   300 * time.Second,
				Events:         []string{"Normal/TFJobResumed"},
			},
		},
		"resume resets a startTime kept through the suspension": {
			job: makeJob("j").replicas(Worker, 1, Never).started(ago(time.Hour)).
				condition(kubeflowv1.JobSuspended, corev1.ConditionTrue, reasonSuspended, ago(time.Minute)).obj(),
			noServices: true,
			wantStatus: statusSummary{
				Conditions: []string{"Created=True/TFJobCreated", "Suspended=False/TFJobResumed"},
				StartTime:  rfc(testNow),
				Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
			},
			wantPlan: planSummary{
				CreatePods:     []string{"j-worker-0"},
				CreateServices: []string{"j-worker-0"},
				Events:         []string{"Normal/TFJobResumed"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pol := defaultPolicy
			if tc.pol != nil {
				pol = *tc.pol
			}
			before := tc.job.DeepCopy()
			obs := observe(tc.job, tc.pods...)
			if tc.noServices {
				obs = observePods(tc.pods...)
			}
			obs = withTaken(obs, tc.takenPods, tc.takenSvcs)
			p := planPass(tc.job, obs, testNow, pol)
			if diff := cmp.Diff(tc.wantStatus, summariseStatus(p.status), cmpOpts...); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPlan, summarisePlan(tc.job, p), cmpOpts...); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.job); diff != "" {
				t.Errorf("planPass changed the job it was given (-before +after):\n%s", diff)
			}
		})
	}
}

// TestPlanPassCleanPodPolicy finishes a job whose pods are in every phase
// and checks which pods and services each policy deletes.
func TestPlanPassCleanPodPolicy(t *testing.T) {
	pods := func(job *kubeflowv1.TFJob) observed {
		return observe(job, succeededPod(Chief, 0), runningPod(PS, 0), pendingPod(Worker, 0), failedPod(Worker, 1, 1),
			makePod(j, Worker, 2).phase(corev1.PodRunning).deleting(testNow, 30).obj())
	}
	all, runningOnly, none := kubeflowv1.CleanPodPolicyAll, kubeflowv1.CleanPodPolicyRunning, kubeflowv1.CleanPodPolicyNone
	everyPod := []string{"j-chief-0", "j-ps-0", "j-worker-0", "j-worker-1", "j-worker-2"}
	everyService := everyPod
	cases := map[string]struct {
		jobPolicy  *kubeflowv1.CleanPodPolicy
		managerPol kubeflowv1.CleanPodPolicy
		wantPlan   planSummary
		wantActive map[kubeflowv1.ReplicaType]int32
	}{
		"All deletes every pod not already being deleted": {
			jobPolicy:  &all,
			managerPol: none,
			wantPlan: planSummary{
				DeletePods:     []string{"j-chief-0", "j-ps-0", "j-worker-0", "j-worker-1"},
				ReleasePods:    everyPod,
				DeleteServices: everyService,
			},
			wantActive: map[kubeflowv1.ReplicaType]int32{Chief: 0, PS: 0, Worker: 0},
		},
		"Running deletes pending and running pods": {
			jobPolicy:  &runningOnly,
			managerPol: none,
			wantPlan: planSummary{
				DeletePods:     []string{"j-ps-0", "j-worker-0"},
				ReleasePods:    everyPod,
				DeleteServices: everyService,
			},
			wantActive: map[kubeflowv1.ReplicaType]int32{Chief: 0, PS: 0, Worker: 0},
		},
		"None deletes nothing and keeps the services": {
			jobPolicy:  &none,
			managerPol: all,
			wantPlan:   planSummary{ReleasePods: everyPod},
			wantActive: map[kubeflowv1.ReplicaType]int32{Chief: 0, PS: 1, Worker: 0},
		},
		"unset uses the manager's default All": {
			managerPol: all,
			wantPlan: planSummary{
				DeletePods:     []string{"j-chief-0", "j-ps-0", "j-worker-0", "j-worker-1"},
				ReleasePods:    everyPod,
				DeleteServices: everyService,
			},
			wantActive: map[kubeflowv1.ReplicaType]int32{Chief: 0, PS: 0, Worker: 0},
		},
		"unset uses the manager's default None": {
			managerPol: none,
			wantPlan:   planSummary{ReleasePods: everyPod},
			wantActive: map[kubeflowv1.ReplicaType]int32{Chief: 0, PS: 1, Worker: 0},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := makeJob("j").replicas(Chief, 1, Never).replicas(PS, 1, Never).replicas(Worker, 3, OnFailure).
				started(ago(time.Hour)).finished(kubeflowv1.JobSucceeded, reasonSucceeded, ago(time.Second))
			if tc.jobPolicy != nil {
				b.cleanPodPolicy(*tc.jobPolicy)
			}
			job := b.obj()
			p := planPass(job, pods(job), testNow, policy{defaultCleanPodPolicy: tc.managerPol})
			if diff := cmp.Diff(tc.wantPlan, summarisePlan(job, p), cmpOpts...); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			gotActive := map[kubeflowv1.ReplicaType]int32{}
			for rtype, rs := range p.status.ReplicaStatuses {
				gotActive[rtype] = rs.Active
			}
			if diff := cmp.Diff(tc.wantActive, gotActive); diff != "" {
				t.Errorf("active pods (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPlanPassCountsEachEndedPodOnce feeds each pass the status the last
// one wrote: a failed pod is charged once, however often it is seen.
func TestPlanPassCountsEachEndedPodOnce(t *testing.T) {
	job := makeJob("j").replicas(Worker, 2, OnFailure).started(ago(time.Hour)).obj()
	ended := failedPod(Worker, 1, 1)
	steps := []struct {
		name            string
		pods            []*corev1.Pod
		wantRestarts    int32
		wantCountedPods []string
		wantPlan        planSummary
	}{{
		name:            "the failed pod is charged and deleted",
		pods:            []*corev1.Pod{runningPod(Worker, 0), ended},
		wantRestarts:    1,
		wantCountedPods: []string{"uid-j-worker-1"},
		wantPlan: planSummary{
			DeletePods: []string{"j-worker-1"}, ReleasePods: []string{"j-worker-1"},
			Events: []string{"Warning/TFJobRestarting"},
		},
	}, {
		name:            "a stale cache still shows it: deleted again, not charged again",
		pods:            []*corev1.Pod{runningPod(Worker, 0), ended},
		wantRestarts:    1,
		wantCountedPods: []string{"uid-j-worker-1"},
		wantPlan:        planSummary{DeletePods: []string{"j-worker-1"}, ReleasePods: []string{"j-worker-1"}},
	}, {
		name: "it is being deleted: not charged again, not deleted again",
		pods: []*corev1.Pod{runningPod(Worker, 0),
			makePod(j, Worker, 1).phase(corev1.PodFailed).exitCode(1).deleting(testNow, 30).obj()},
		wantRestarts:    1,
		wantCountedPods: []string{"uid-j-worker-1"},
		wantPlan:        planSummary{ReleasePods: []string{"j-worker-1"}},
	}, {
		name:         "it is gone: its replacement is created and the UID forgotten",
		pods:         []*corev1.Pod{runningPod(Worker, 0)},
		wantRestarts: 1,
		wantPlan:     planSummary{CreatePods: []string{"j-worker-1"}},
	}, {
		name:            "the replacement fails too: charged as a new restart",
		pods:            []*corev1.Pod{runningPod(Worker, 0), makePod(j, Worker, 1).phase(corev1.PodFailed).exitCode(1).uid("uid-j-worker-1-b").obj()},
		wantRestarts:    2,
		wantCountedPods: []string{"uid-j-worker-1-b"},
		wantPlan: planSummary{
			DeletePods: []string{"j-worker-1"}, ReleasePods: []string{"j-worker-1"},
			Events: []string{"Warning/TFJobRestarting"},
		},
	}}
	for _, step := range steps {
		p := planPass(job, observe(job, step.pods...), testNow, defaultPolicy)
		if diff := cmp.Diff(step.wantRestarts, p.status.Restarts); diff != "" {
			t.Errorf("%s: restarts (-want +got):\n%s", step.name, diff)
		}
		if diff := cmp.Diff(step.wantCountedPods, p.status.CountedPods, cmpOpts...); diff != "" {
			t.Errorf("%s: countedPods (-want +got):\n%s", step.name, diff)
		}
		if diff := cmp.Diff(step.wantPlan, summarisePlan(job, p), cmpOpts...); diff != "" {
			t.Errorf("%s: plan (-want +got):\n%s", step.name, diff)
		}
		job.Status = p.status
	}
}

// TestPlanPassCountsEachDisruptionOnce is the same for a preempted pod.
func TestPlanPassCountsEachDisruptionOnce(t *testing.T) {
	job := makeJob("j").replicas(Worker, 2, Never).started(ago(time.Hour)).obj()
	preempted := makePod(j, Worker, 0).phase(corev1.PodFailed).exitCode(143).disruption(colocation.ReasonPreemptionByScheduler).obj()
	for pass := 1; pass <= 3; pass++ {
		p := planPass(job, observe(job, preempted, runningPod(Worker, 1)), testNow, defaultPolicy)
		// The first pass restarts; the later ones see worker 0 still not
		// back: the job stays Restarting, not Running, while degraded.
		want := statusSummary{
			Conditions:  []string{"Created=True/TFJobCreated", "Restarting=True/PreemptionByScheduler"},
			StartTime:   rfc(ago(time.Hour)),
			Disruptions: 1,
			CountedPods: []string{"uid-j-worker-0"},
			Replicas:    map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 1, Failed: 1}},
		}
		if diff := cmp.Diff(want, summariseStatus(p.status), cmpOpts...); diff != "" {
			t.Errorf("pass %d: status (-want +got):\n%s", pass, diff)
		}
		var wantEvents []string
		if pass == 1 {
			wantEvents = []string{"Warning/PreemptionByScheduler"}
		}
		if diff := cmp.Diff(wantEvents, summarisePlan(job, p).Events, cmpOpts...); diff != "" {
			t.Errorf("pass %d: events (-want +got):\n%s", pass, diff)
		}
		job.Status = p.status
	}
	// Worker 0's replacement runs: every replica does, Running is back.
	p := planPass(job, observe(job, runningPod(Worker, 0), runningPod(Worker, 1)), testNow, defaultPolicy)
	if diff := cmp.Diff([]string{"Created=True/TFJobCreated", "Running=True/TFJobRunning"}, summariseStatus(p.status).Conditions); diff != "" {
		t.Errorf("every replica back: conditions (-want +got):\n%s", diff)
	}
}

// TestPlanPassSuspendAndResume suspends a running job and resumes it.
func TestPlanPassSuspendAndResume(t *testing.T) {
	// The deadline of 20 minutes would pass at ago(40m) were it not suspended.
	job := makeJob("j").replicas(Worker, 2, Never).deadline(1200).started(ago(time.Hour)).obj()
	steps := []struct {
		name        string
		suspend     bool
		now         time.Time
		obs         observed
		wantStatus  statusSummary
		wantPlan    planSummary
		wantMessage string
	}{{
		name:    "running",
		now:     ago(50 * time.Minute),
		obs:     observe(job, runningPod(Worker, 0), runningPod(Worker, 1)),
		suspend: false,
		wantStatus: statusSummary{
			Conditions: []string{"Created=True/TFJobCreated", "Running=True/TFJobRunning"},
			StartTime:  rfc(ago(time.Hour)),
			Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 2}},
		},
		wantPlan: planSummary{RequeueAfter: 10 * time.Minute},
	}, {
		name:    "suspended",
		now:     ago(45 * time.Minute),
		obs:     observe(job, runningPod(Worker, 0), runningPod(Worker, 1)),
		suspend: true,
		wantStatus: statusSummary{
			Conditions:  []string{"Created=True/TFJobCreated", "Running=False/TFJobRunning", "Suspended=True/TFJobSuspended"},
			CountedPods: []string{"uid-j-worker-0", "uid-j-worker-1"},
			Replicas:    map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
		},
		wantPlan: planSummary{
			DeletePods:     []string{"j-worker-0", "j-worker-1"},
			ReleasePods:    []string{"j-worker-0", "j-worker-1"},
			DeleteServices: []string{"j-worker-0", "j-worker-1"},
			Events:         []string{"Normal/TFJobSuspended"},
		},
		wantMessage: "TFJob ns/j is suspended.",
	}, {
		name:    "still suspended past the deadline: nothing to do, the deadline is not running",
		now:     testNow,
		obs:     observePods(),
		suspend: true,
		wantStatus: statusSummary{
			Conditions: []string{"Created=True/TFJobCreated", "Running=False/TFJobRunning", "Suspended=True/TFJobSuspended"},
			Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
		},
	}, {
		name:    "resumed: the deadline counts from now",
		now:     testNow,
		obs:     observePods(),
		suspend: false,
		wantStatus: statusSummary{
			Conditions: []string{"Created=True/TFJobCreated", "Running=False/TFJobRunning", "Suspended=False/TFJobResumed"},
			StartTime:  rfc(testNow),
			Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{Worker: {}},
		},
		wantPlan: planSummary{
			CreatePods:     []string{"j-worker-0", "j-worker-1"},
			CreateServices: []string{"j-worker-0", "j-worker-1"},
			RequeueAfter:   20 * time.Minute,
			Events:         []string{"Normal/TFJobResumed"},
		},
		wantMessage: "TFJob ns/j is resumed.",
	}, {
		name:    "running again",
		now:     testNow.Add(time.Minute),
		obs:     observe(job, runningPod(Worker, 0), runningPod(Worker, 1)),
		suspend: false,
		wantStatus: statusSummary{
			Conditions: []string{"Created=True/TFJobCreated", "Suspended=False/TFJobResumed", "Running=True/TFJobRunning"},
			StartTime:  rfc(testNow),
			Replicas:   map[kubeflowv1.ReplicaType]replicaSummary{Worker: {Active: 2}},
		},
		wantPlan: planSummary{RequeueAfter: 19 * time.Minute},
	}}
	for _, step := range steps {
		job.Spec.RunPolicy.Suspend = &step.suspend
		p := planPass(job, step.obs, step.now, defaultPolicy)
		if diff := cmp.Diff(step.wantStatus, summariseStatus(p.status), cmpOpts...); diff != "" {
			t.Errorf("%s: status (-want +got):\n%s", step.name, diff)
		}
		if diff := cmp.Diff(step.wantPlan, summarisePlan(job, p), cmpOpts...); diff != "" {
			t.Errorf("%s: plan (-want +got):\n%s", step.name, diff)
		}
		if step.wantMessage != "" {
			last := p.status.Conditions[len(p.status.Conditions)-1]
			if diff := cmp.Diff(step.wantMessage, last.Message); diff != "" {
				t.Errorf("%s: message of the last condition (-want +got):\n%s", step.name, diff)
			}
		}
		job.Status = p.status
	}
}

// A suspended job's account is settled once, when it is suspended: later
// passes write nothing, so a suspended job costs no status writes.
func TestPlanPassSuspendedSettlesOnce(t *testing.T) {
	job := makeJob("j").replicas(Worker, 1, Never).started(ago(time.Hour)).obj()
	job.Status = planPass(job, observe(job, runningPod(Worker, 0)), ago(30*time.Minute), defaultPolicy).status
	job.Spec.RunPolicy.Suspend = ptr(true)
	job.Status = planPass(job, observe(job, runningPod(Worker, 0)), ago(20*time.Minute), defaultPolicy).status
	settled := job.Status.Goodput.DeepCopy()
	if settled.ProgressLostSeconds != 600 {
		t.Errorf("suspending lost %ds, want the 600s run since the job last ran", settled.ProgressLostSeconds)
	}
	later := planPass(job, observePods(), ago(10*time.Minute), defaultPolicy).status
	if diff := cmp.Diff(settled, later.Goodput); diff != "" {
		t.Errorf("a later pass while suspended changed the account (-settled +later):\n%s", diff)
	}
}

// TestPlanPassTTLAfterSuccess follows a job from success to its deletion.
func TestPlanPassTTLAfterSuccess(t *testing.T) {
	job := makeJob("j").replicas(Worker, 1, Never).ttl(60).started(ago(time.Hour)).obj()
	steps := []struct {
		name          string
		now           time.Time
		obs           observed
		wantRequeue   time.Duration
		wantDeleteJob bool
	}{
		{name: "succeeds", now: testNow, obs: observe(job, succeededPod(Worker, 0)), wantRequeue: time.Minute},
		{name: "half way", now: testNow.Add(30 * time.Second), obs: observePods(), wantRequeue: 30 * time.Second},
		{name: "one second early", now: testNow.Add(59 * time.Second), obs: observePods(), wantRequeue: time.Second},
		{name: "due", now: testNow.Add(60 * time.Second), obs: observePods(), wantDeleteJob: true},
	}
	for _, step := range steps {
		p := planPass(job, step.obs, step.now, defaultPolicy)
		if diff := cmp.Diff(step.wantRequeue, p.requeueAfter); diff != "" {
			t.Errorf("%s: requeueAfter (-want +got):\n%s", step.name, diff)
		}
		if diff := cmp.Diff(step.wantDeleteJob, p.deleteJob); diff != "" {
			t.Errorf("%s: deleteJob (-want +got):\n%s", step.name, diff)
		}
		if diff := cmp.Diff(rfc(testNow), timeString(p.status.CompletionTime)); diff != "" {
			t.Errorf("%s: completionTime (-want +got):\n%s", step.name, diff)
		}
		job.Status = p.status
	}
}

func TestPlanPassReplicaStatusSelectors(t *testing.T) {
	job := makeJob("j").replicas(PS, 1, Never).replicas(Worker, 1, Never).obj()
	p := planPass(job, observePods(), testNow, defaultPolicy)
	want := map[kubeflowv1.ReplicaType]kubeflowv1.ReplicaStatus{
		PS: {
			Selector: "job-name=j,training.kubeflow.org/job-name=j,training.kubeflow.org/operator-name=tfjob-controller,training.kubeflow.org/replica-type=ps",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
				"job-name": "j", "training.kubeflow.org/job-name": "j",
				"training.kubeflow.org/operator-name": "tfjob-controller", "training.kubeflow.org/replica-type": "ps",
			}},
		},
		Worker: {
			Selector: "job-name=j,training.kubeflow.org/job-name=j,training.kubeflow.org/operator-name=tfjob-controller,training.kubeflow.org/replica-type=worker",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
				"job-name": "j", "training.kubeflow.org/job-name": "j",
				"training.kubeflow.org/operator-name": "tfjob-controller", "training.kubeflow.org/replica-type": "worker",
			}},
		},
	}
	got := map[kubeflowv1.ReplicaType]kubeflowv1.ReplicaStatus{}
	for rtype, rs := range p.status.ReplicaStatuses {
		got[rtype] = *rs
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replicaStatuses (-want +got):\n%s", diff)
	}
}

// TestPlanPassMessages checks the words of the conditions users read.
func TestPlanPassMessages(t *testing.T) {
	cases := map[string]struct {
		job         *kubeflowv1.TFJob
		pods        []*corev1.Pod
		wantMessage string
	}{
		"created": {
			job:         makeJob("j").replicas(Worker, 1, Never).obj(),
			wantMessage: "TFJob ns/j is created.",
		},
		"failed replicas are counted by type": {
			job:         makeJob("j").replicas(Worker, 3, Never).started(ago(time.Minute)).obj(),
			pods:        podList(failedPod(Worker, 0, 1), runningPod(Worker, 1), failedPod(Worker, 2, 2)),
			wantMessage: "TFJob ns/j has failed because 2 Worker replica(s) failed.",
		},
		"restarts are counted": {
			job:         makeJob("j").replicas(Worker, 3, OnFailure).started(ago(time.Minute)).obj(),
			pods:        podList(failedPod(Worker, 0, 1), runningPod(Worker, 1), failedPod(Worker, 2, 2)),
			wantMessage: "TFJob ns/j is restarting because 2 replica(s) failed.",
		},
		"disruptions say they are not charged": {
			job:         makeJob("j").replicas(Worker, 2, Never).started(ago(time.Minute)).obj(),
			pods:        podList(makePod(j, Worker, 0).phase(corev1.PodFailed).disruption(colocation.ReasonEvictionByEvictionAPI).obj(), runningPod(Worker, 1)),
			wantMessage: "TFJob ns/j is restarting 1 replica(s) ended by EvictionByEvictionAPI; not charged to backoffLimit.",
		},
		"deadline": {
			job:         makeJob("j").replicas(Worker, 1, Never).deadline(30).started(ago(time.Minute)).obj(),
			pods:        podList(runningPod(Worker, 0)),
			wantMessage: "TFJob ns/j has failed because it was active longer than activeDeadlineSeconds (30s).",
		},
		"in-place restarts over backoffLimit": {
			job:         makeJob("j").replicas(Worker, 1, OnFailure).backoffLimit(3).started(ago(time.Minute)).restarts(2).obj(),
			pods:        podList(makePod(j, Worker, 0).phase(corev1.PodRunning).restarts(2).obj()),
			wantMessage: "TFJob ns/j has failed because it restarted 4 times, more than backoffLimit 3.",
		},
		"a failure with no restart left": {
			job:         makeJob("j").replicas(Worker, 1, OnFailure).backoffLimit(0).started(ago(time.Minute)).obj(),
			pods:        podList(failedPod(Worker, 0, 1)),
			wantMessage: "TFJob ns/j has failed because a replica failed after 0 restarts, the most backoffLimit 0 allows.",
		},
		"success": {
			job:         makeJob("j").replicas(Worker, 1, Never).started(ago(time.Minute)).obj(),
			pods:        podList(succeededPod(Worker, 0)),
			wantMessage: "TFJob ns/j successfully completed.",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := planPass(tc.job, observe(tc.job, tc.pods...), testNow, defaultPolicy)
			last := p.status.Conditions[len(p.status.Conditions)-1]
			if diff := cmp.Diff(tc.wantMessage, last.Message); diff != "" {
				t.Errorf("message of the last condition (-want +got):\n%s", diff)
			}
			var eventMessages []string
			for _, e := range p.events {
				eventMessages = append(eventMessages, e.message)
			}
			if tc.wantMessage != "TFJob ns/j is created." && !strings.Contains(strings.Join(eventMessages, "\n"), tc.wantMessage) {
				t.Errorf("no event says %q; events: %q", tc.wantMessage, eventMessages)
			}
		})
	}
}
