package doctor

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
)

// knownError is a message training logs show for a known cause, with
// what to do about it.
type knownError struct {
	// needles: any of them in the log names the cause.
	needles []string
	cause   string
	fix     string
}

// knownErrors are the causes doctor recognises in the logs of crashing
// training containers, most specific first.
var knownErrors = []knownError{
	{
		needles: []string{"CUDA_ERROR_NO_DEVICE"},
		cause:   "the container sees no GPU (CUDA_ERROR_NO_DEVICE)",
		fix:     "request nvidia.com/gpu in the tensorflow container's resources.limits (GPUs are only mounted into containers that request them) and check that the node runs the NVIDIA device plugin and container toolkit",
	},
	{
		needles: []string{"Could not load dynamic library 'libcuda", "libcuda.so.1: cannot open shared object file"},
		cause:   "the CUDA driver library libcuda is not in the container",
		fix:     "run on a GPU node with the NVIDIA container toolkit, request nvidia.com/gpu (the toolkit mounts libcuda only then), and use a GPU build of the TensorFlow image",
	},
	{
		needles: []string{"CUDA out of memory", "CUDA_ERROR_OUT_OF_MEMORY", "OOM when allocating", "ResourceExhaustedError"},
		cause:   "the model does not fit in GPU memory (out of memory)",
		fix:     "lower the batch size or model size, or request a GPU with more memory; set TF_FORCE_GPU_ALLOW_GROWTH=true so that TensorFlow does not reserve all GPU memory at start",
	},
}

// checkCrashLoop finds the pods of the jobs in scope whose containers
// crash-loop, were killed for memory, or failed, and says why when their
// log tail shows a known error. It is a FAIL for active jobs; for a job
// that has already finished it is a WARN that explains the end, so that
// old failed jobs do not fail every later run.
func checkCrashLoop(s *Snapshot) []Result {
	var out []Result
	for i := range s.Jobs {
		j := &s.Jobs[i]
		for _, p := range s.jobPods(j) {
			r, bad := podCrashFinding(s, j, p)
			if !bad {
				continue
			}
			if jobFinished(j) {
				r.Status = StatusWarn
				r.Finding += " (the job has finished)"
			}
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return []Result{ok(CheckCrashLoop, "no TFJob container is crash-looping, OOM-killed or failed")}
	}
	return out
}

// podCrashFinding is the finding for one pod, if any of its containers is
// crash-looping, OOM-killed or failed.
func podCrashFinding(s *Snapshot, j *kubeflowv1.TFJob, p *corev1.Pod) (Result, bool) {
	for _, cs := range p.Status.ContainerStatuses {
		what := containerTrouble(p, cs)
		if what == "" {
			continue
		}
		r := Result{
			Check: CheckCrashLoop, Status: StatusFail, Object: "pod " + p.Namespace + "/" + p.Name,
			Finding: fmt.Sprintf("%s: container %s %s, %d restart(s)", jobRef(j), cs.Name, what, cs.RestartCount),
			Fix:     fmt.Sprintf("read why: kubectl logs -n %s %s -c %s --previous", p.Namespace, p.Name, cs.Name),
		}
		if oomKilled(cs) {
			why, fix := oomKilledAt(p, cs.Name)
			r.Finding += "; " + why
			r.Fix = fix
		}
		log, read := s.Logs[logKey(p.Namespace, p.Name, cs.Name)]
		if k := matchKnownError(log); k != nil {
			r.Finding += "; its log says " + k.cause
			r.Fix = k.fix
		} else if !read && !oomKilled(cs) {
			r.Finding += "; its log could not be read"
		}
		return r, true
	}
	return Result{}, false
}

// containerTrouble says what is wrong with a container, or "".
func containerTrouble(p *corev1.Pod, cs corev1.ContainerStatus) string {
	switch {
	case cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff":
		return "is in CrashLoopBackOff"
	case cs.State.Terminated != nil && cs.State.Terminated.Reason == "OOMKilled":
		return "was OOMKilled"
	case cs.State.Terminated != nil && cs.State.Terminated.ExitCode != 0 && p.Status.Phase == corev1.PodFailed:
		return fmt.Sprintf("failed with exit code %d (%s)", cs.State.Terminated.ExitCode, cs.State.Terminated.Reason)
	}
	return ""
}

func oomKilled(cs corev1.ContainerStatus) bool {
	return (cs.State.Terminated != nil && cs.State.Terminated.Reason == "OOMKilled") ||
		(cs.LastTerminationState.Terminated != nil && cs.LastTerminationState.Terminated.Reason == "OOMKilled")
}

// NeedsLog reports whether doctor reads a container's log: only for the
// containers it reports, to keep the number of log requests small.
func NeedsLog(p *corev1.Pod, cs corev1.ContainerStatus) bool {
	return containerTrouble(p, cs) != ""
}

func matchKnownError(log string) *knownError {
	for i := range knownErrors {
		for _, needle := range knownErrors[i].needles {
			if strings.Contains(log, needle) {
				return &knownErrors[i]
			}
		}
	}
	return nil
}
