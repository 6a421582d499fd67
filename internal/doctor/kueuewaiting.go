package doctor

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/queueing"
)

// longWait is how long a job may wait in a Kueue queue before doctor says
// why. Kueue admits a job whose quota is free within seconds; one still
// suspended after ten minutes waits for quota others hold, or for a queue
// that cannot admit it at all, and its user should know which.
const longWait = 10 * time.Minute

// checkKueueWaiting explains the TFJobs Kueue keeps suspended, from their
// Workload's newest condition. A queue that cannot admit the job (a
// LocalQueue or ClusterQueue that does not exist or is stopped, a job
// larger than the queue's whole quota) is a FAIL at once: the job never
// starts. Waiting for quota that others hold is a WARN after longWait,
// since waiting for capacity is what offline work does. Jobs Kueue keeps
// no Workload for are kueue-integration's.
func checkKueueWaiting(s *Snapshot) []Result {
	var out []Result
	queued, longest := 0, time.Duration(0)
	var longestJob *kubeflowv1.TFJob
	for i := range s.Jobs {
		j := &s.Jobs[i]
		w := s.Kueue.Workloads[j.UID]
		if !queueing.Queued(j) || jobFinished(j) || w == nil || w.Admitted() {
			continue
		}
		queued++
		waited := s.Now.Sub(w.WaitingSince(j))
		if waited > longest {
			longest, longestJob = waited, j
		}
		if cause := causeOf(w.Why()); waited > longWait || cause != nil && cause.never {
			out = append(out, waitingResult(s, j, w, waited))
		}
	}
	switch {
	case len(out) > 0:
		return out
	case queued > 0:
		return []Result{ok(CheckKueueWaiting, fmt.Sprintf("%d TFJob(s) wait in Kueue queues that can admit them, none for over %d minutes (the longest: %s/%s, %s)",
			queued, int(longWait.Minutes()), longestJob.Namespace, longestJob.Name, age(s.Now, s.Now.Add(-longest))))}
	}
	return []Result{ok(CheckKueueWaiting, "no TFJob waits in a Kueue queue")}
}

// waitCause is a kind of reason a Workload waits, recognised in its
// condition, with what to do about it.
type waitCause struct {
	// matches recognises the cause by the condition's reason and message.
	matches func(reason, message string) bool
	// never: the job cannot start until someone acts.
	never bool
	fix   func(j *kubeflowv1.TFJob) string
}

// waitCauses are the causes doctor tells apart, most specific first. The
// reasons are Kueue's: Inadmissible (or Misconfigured with its
// UnadmittedWorkloadsObservability gate) for a missing queue, Pending (or
// WaitingForQuota, ExceedsMaxQuota) for quota.
var waitCauses = []waitCause{
	{
		matches: func(_, m string) bool {
			return strings.HasPrefix(m, "LocalQueue ") && strings.HasSuffix(m, " doesn't exist")
		},
		never: true,
		fix: func(j *kubeflowv1.TFJob) string {
			q := queueing.QueueName(j)
			return fmt.Sprintf("create LocalQueue %s in namespace %s, pointing at a ClusterQueue (kubectl get clusterqueues lists them): kubectl apply -f - with apiVersion kueue.x-k8s.io/v1beta2, kind LocalQueue, metadata {name: %s, namespace: %s}, spec {clusterQueue: <ClusterQueue>}; or move the job to a queue that exists (kubectl -n %s get localqueues): kubectl -n %s label tfjob %s %s=<queue> --overwrite",
				q, j.Namespace, q, j.Namespace, j.Namespace, j.Namespace, j.Name, queueing.QueueNameLabel)
		},
	},
	{
		matches: func(_, m string) bool {
			return strings.HasPrefix(m, "ClusterQueue ") && strings.HasSuffix(m, " doesn't exist")
		},
		never: true,
		fix: func(j *kubeflowv1.TFJob) string {
			return fmt.Sprintf("create the ClusterQueue LocalQueue %s/%s points at, with a quota for the job's resources, or recreate the LocalQueue pointing at one that exists (kubectl get clusterqueues); see docs/queueing.md",
				j.Namespace, queueing.QueueName(j))
		},
	},
	{
		matches: func(r, m string) bool { return strings.HasSuffix(m, " is inactive") || r == "Suspended" },
		never:   true,
		fix: func(j *kubeflowv1.TFJob) string {
			return fmt.Sprintf("find why the queue is stopped: kubectl -n %s describe localqueue %s names its ClusterQueue, and kubectl describe clusterqueue <name> says why it is inactive (a stopPolicy, or a ResourceFlavor it names that does not exist); clear the stopPolicy or create the flavor",
				j.Namespace, queueing.QueueName(j))
		},
	},
	{
		matches: func(r, m string) bool { return r == "ExceedsMaxQuota" || strings.Contains(m, "> maximum capacity") },
		never:   true,
		fix: func(j *kubeflowv1.TFJob) string {
			return fmt.Sprintf("the job asks for more than its ClusterQueue can ever give (kubectl -n %s get localqueue %s shows which): lower the job's requests or replicas, or raise the ClusterQueue's nominalQuota (kubectl edit clusterqueue <name>)",
				j.Namespace, queueing.QueueName(j))
		},
	},
	{
		matches: func(r, m string) bool {
			return r == "WaitingForQuota" || strings.Contains(m, "insufficient unused quota") || strings.Contains(m, "couldn't assign flavors")
		},
		fix: func(j *kubeflowv1.TFJob) string {
			return fmt.Sprintf("the queue's quota is held by other jobs: wait for them to finish (kubectl get workloads -A shows who holds it), or raise the nominalQuota of the ClusterQueue behind LocalQueue %s/%s (or let it borrow from a cohort); a higher WorkloadPriorityClass lets the job preempt lower ones where the ClusterQueue allows preemption",
				j.Namespace, queueing.QueueName(j))
		},
	},
}

// waitingResult is the finding about one job Kueue keeps waiting.
func waitingResult(s *Snapshot, j *kubeflowv1.TFJob, w *queueing.Workload, waited time.Duration) Result {
	why := w.Why()
	finding := fmt.Sprintf("suspended by Kueue for %s, waiting in LocalQueue %s", age(s.Now, s.Now.Add(-waited)), queueing.QueueName(j))
	if waited > longWait {
		finding = fmt.Sprintf("suspended by Kueue for %s (over %d minutes), waiting in LocalQueue %s", age(s.Now, s.Now.Add(-waited)), int(longWait.Minutes()), queueing.QueueName(j))
	}
	fix := fmt.Sprintf("read what Kueue says: kubectl -n %s describe workload %s; see docs/queueing.md", j.Namespace, w.Name)
	status := StatusWarn
	if why != nil {
		finding += fmt.Sprintf(": Workload %s says %s=%s, reason %s: %s", w.Name, why.Type, why.Status, why.Reason, why.Message)
		if c := causeOf(why); c != nil {
			fix = c.fix(j)
			if c.never {
				status = StatusFail
			}
		}
	} else {
		finding += fmt.Sprintf(": Kueue has not tried to admit it yet (Workload %s says no reason); jobs ahead of it in the queue come first", w.Name)
	}
	return Result{Check: CheckKueueWaiting, Status: status, Object: jobRef(j), Finding: finding, Fix: fix}
}

// causeOf recognises why a Workload waits; nil for a reason doctor does
// not know, or no condition.
func causeOf(c *metav1.Condition) *waitCause {
	if c == nil {
		return nil
	}
	for i := range waitCauses {
		if waitCauses[i].matches(c.Reason, c.Message) {
			return &waitCauses[i]
		}
	}
	return nil
}
