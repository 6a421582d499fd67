package doctor

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
)

func TestCheckCrashLoop(t *testing.T) {
	job := makeJob("mnist").workers(1).obj()
	// oomKilled is a pod whose container the kernel killed, with these
	// resources, on reclaimed capacity or not.
	oomKilled := func(reclaimed bool, requests, limits corev1.ResourceList) corev1.Pod {
		p := jobPod(job, "mnist-worker-0").on("n1").obj()
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: requests, Limits: limits}
		if reclaimed {
			if _, err := colocation.ToBatchResources(&p.Spec, colocation.ContainerRulesOf(nil)); err != nil {
				t.Fatal(err)
			}
			p.Annotations = map[string]string{colocation.OriginalResourcesAnnotation: "{}"}
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "tensorflow", RestartCount: 2,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}},
		}}
		return p
	}
	failed := jobPod(job, "mnist-worker-0").on("n1").obj()
	failed.Status.Phase = corev1.PodFailed
	failed.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: "tensorflow", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
	}}
	const key = ns + "/mnist-worker-0/tensorflow"
	cases := map[string]struct {
		job         kubeflowv1.TFJob
		pod         corev1.Pod
		logs        map[string]string
		wantStatus  Status
		wantFinding string
		wantFix     string
	}{
		"no device": {
			pod:        jobPod(job, "mnist-worker-0").crashLooping(5).obj(),
			logs:       map[string]string{key: "I tensorflow/core ...\nE cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n"},
			wantStatus: StatusFail, wantFinding: "tfjob team-a/mnist: container tensorflow is in CrashLoopBackOff, 5 restart(s); its log says the container sees no GPU (CUDA_ERROR_NO_DEVICE)",
			wantFix: "request nvidia.com/gpu in the tensorflow container's resources.limits",
		},
		"GPU out of memory": {
			pod:        jobPod(job, "mnist-worker-0").crashLooping(3).obj(),
			logs:       map[string]string{key: "ResourceExhaustedError: OOM when allocating tensor with shape[4096,4096]"},
			wantStatus: StatusFail, wantFinding: "does not fit in GPU memory", wantFix: "lower the batch size",
		},
		"no libcuda": {
			pod:        jobPod(job, "mnist-worker-0").crashLooping(3).obj(),
			logs:       map[string]string{key: "W Could not load dynamic library 'libcuda.so.1'; dlerror: libcuda.so.1: cannot open shared object file"},
			wantStatus: StatusFail, wantFinding: "libcuda is not in the container", wantFix: "NVIDIA container toolkit",
		},
		"an unknown error": {
			pod:        jobPod(job, "mnist-worker-0").crashLooping(3).obj(),
			logs:       map[string]string{key: "ValueError: bad input"},
			wantStatus: StatusFail, wantFinding: "CrashLoopBackOff, 3 restart(s)", wantFix: "kubectl logs -n team-a mnist-worker-0 -c tensorflow --previous",
		},
		"an unreadable log": {
			pod:        jobPod(job, "mnist-worker-0").crashLooping(3).obj(),
			wantStatus: StatusFail, wantFinding: "its log could not be read",
		},
		"killed at the memory limit": {
			pod:        oomKilled(false, resources("memory", "1Gi"), resources("memory", "2Gi")),
			wantStatus: StatusFail, wantFinding: "was OOMKilled, 2 restart(s); it was OOMKilled at its memory limit of 2Gi (limits.memory)",
			wantFix: "raise resources.limits.memory of container tensorflow in the job's template (now 2Gi), and its requests.memory, or lower what training holds in memory",
		},
		"killed at the template's limit, on reclaimed capacity": {
			pod:        oomKilled(true, resources("memory", "1Gi"), resources("memory", "2Gi")),
			wantStatus: StatusFail, wantFinding: "it was OOMKilled at its memory limit of 2Gi (limits.memory: the template's limit, which the pod on reclaimed capacity keeps)",
			wantFix: "raise resources.limits.memory of container tensorflow in the job's template (now 2Gi), and its requests.memory, which the pod asks of reclaimed memory as backfill.dev/batch-memory (now 1Gi),",
		},
		"killed without a memory limit, on reclaimed capacity": {
			pod:        oomKilled(true, resources("memory", "1Gi"), nil),
			wantStatus: StatusFail, wantFinding: "it was OOMKilled with no memory limit: its node ran out of memory; on reclaimed capacity it asked 1Gi of backfill.dev/batch-memory (the template's memory request), which places the pod but limits nothing",
			wantFix: "raise requests.memory of container tensorflow in the job's template to what training uses",
		},
		"killed without a memory limit": {
			pod:        oomKilled(false, nil, nil),
			wantStatus: StatusFail, wantFinding: "it was OOMKilled with no memory limit: its node ran out of memory",
			wantFix: "set resources.requests.memory of container tensorflow in the job's template to what training uses, and resources.limits.memory",
		},
		"a failed pod": {
			pod:        failed,
			wantStatus: StatusFail, wantFinding: "failed with exit code 1 (Error)",
		},
		"a failed pod of a failed job": {
			job:        makeJob("mnist").workers(1).condition(kubeflowv1.JobFailed, corev1.ConditionTrue, "TFJobFailed").obj(),
			pod:        failed,
			wantStatus: StatusWarn, wantFinding: "failed with exit code 1 (Error), 0 restart(s); its log could not be read (the job has finished)",
		},
		"a running pod": {
			pod:        jobPod(job, "mnist-worker-0").on("n1").obj(),
			wantStatus: StatusOK,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			if tc.job.Name == "" {
				tc.job = job
			}
			s.Jobs, s.Pods = []kubeflowv1.TFJob{tc.job}, []corev1.Pod{tc.pod}
			if tc.logs != nil {
				s.Logs = tc.logs
			}
			got := checkCrashLoop(s)
			if len(got) != 1 || got[0].Status != tc.wantStatus || !strings.Contains(got[0].Finding, tc.wantFinding) || !strings.Contains(got[0].Fix, tc.wantFix) {
				t.Errorf("got %+v, want one %s with %q in the finding and %q in the fix", got, tc.wantStatus, tc.wantFinding, tc.wantFix)
			}
		})
	}
}
