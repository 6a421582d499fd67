package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/queueing"
)

// queueReading is what describe learned of the Workload Kueue keeps for a
// job submitted to a queue.
type queueReading struct {
	workload *queueing.Workload // nil when there is none or it could not be read
	// err is why the Workload could not be read: queueing.ErrNoKueue, a
	// refusal, anything else. describe shows it and carries on.
	err error
}

// readQueue reads the Workload of a job that names a queue; nil for a job
// that names none.
func readQueue(ctx context.Context, c client.Reader, job *kubeflowv1.TFJob) *queueReading {
	if queueing.QueueName(job) == "" {
		return nil
	}
	w, err := queueing.FindWorkload(ctx, c, job)
	return &queueReading{workload: w, err: err}
}

// writeQueue shows where the job stands in its Kueue queue and why: the
// LocalQueue it names, the ClusterQueue that admitted it, its Workload,
// since when it waits or runs, and the Workload's word on it.
func writeQueue(w io.Writer, d *description, now time.Time) {
	q := d.queue
	if q == nil {
		return
	}
	fmt.Fprintln(w, "Queue:")
	fmt.Fprintf(w, "  Local Queue:\t%s\n", queueing.QueueName(d.job))
	if q.workload == nil {
		fmt.Fprintf(w, "  Workload:\t%s\n", noWorkloadInWords(d.job, q.err))
		return
	}
	wl := q.workload
	clusterQueue := wl.ClusterQueue
	if clusterQueue == "" {
		clusterQueue = "<none>: not admitted"
	}
	fmt.Fprintf(w, "  Cluster Queue:\t%s\n", clusterQueue)
	fmt.Fprintf(w, "  Workload:\t%s\n", wl.Name)
	fmt.Fprintf(w, "  Admission:\t%s\n", admissionInWords(wl, d.job, now))
	why := wl.Why()
	if c := wl.Condition(queueing.ConditionEvicted); c != nil && c.Status == metav1.ConditionTrue {
		// Kueue repeats the eviction's message when it takes the quota
		// back; say it once.
		said := ""
		if why == nil || why.Message != c.Message {
			said = ": " + c.Message
		}
		fmt.Fprintf(w, "  Evicted:\t%s, %s ago%s; the job stays suspended until Kueue admits it again\n", evictionInWords(c.Reason), age(c.LastTransitionTime, now), said)
	}
	label := "Why"
	if wl.Admitted() || isDone(d.job) {
		label = "Latest"
	}
	if why == nil {
		fmt.Fprintf(w, "  %s:\t<none>: Kueue has not tried to admit the job yet; jobs ahead of it in the queue come first\n", label)
		return
	}
	fmt.Fprintf(w, "  %s:\t%s\n", label, workloadConditionInWords(why, now))
}

// admissionInWords says whether Kueue let the job run, and since when.
func admissionInWords(wl *queueing.Workload, job *kubeflowv1.TFJob, now time.Time) string {
	if c := wl.Condition(queueing.ConditionFinished); c != nil && c.Status == metav1.ConditionTrue {
		return "finished " + timestamp(c.LastTransitionTime, now) + ": Kueue released the job's quota"
	}
	if wl.Admitted() {
		return "admitted " + timestamp(wl.Condition(queueing.ConditionAdmitted).LastTransitionTime, now)
	}
	return "waiting since " + timestamp(metav1.NewTime(wl.WaitingSince(job)), now)
}

// workloadConditionInWords is one of the Workload's conditions: its reason
// and message, then which condition says so and since when.
func workloadConditionInWords(c *metav1.Condition, now time.Time) string {
	said := orNone(c.Reason)
	if c.Message != "" {
		said += ": " + c.Message
	}
	return fmt.Sprintf("%s (%s=%s, %s ago)", said, c.Type, c.Status, age(c.LastTransitionTime, now))
}

// evictionInWords says why Kueue took admission back, from the reason of
// its Evicted condition.
func evictionInWords(reason string) string {
	switch reason {
	case "Preempted":
		return "preempted by Kueue for a workload of higher priority or one reclaiming its quota"
	case "PodsReadyTimeout":
		return "evicted by Kueue: its pods were not all ready within waitForPodsReady's timeout"
	}
	return "evicted by Kueue (" + orNone(reason) + ")"
}

// noWorkloadInWords says why describe shows no Workload for a job that
// names a queue, and what that means for the job.
func noWorkloadInWords(job *kubeflowv1.TFJob, err error) string {
	suspended := job.Spec.RunPolicy.Suspend != nil && *job.Spec.RunPolicy.Suspend
	switch {
	case errors.Is(err, queueing.ErrNoKueue):
		s := "<none>: Kueue is not installed (the cluster serves no " + queueing.WorkloadListGVK.Group + " Workloads), so the label " +
			queueing.QueueNameLabel + " does nothing and the job stays as it is"
		if suspended {
			s += ": suspended until you un-suspend it (kubectl patch tfjob " + job.Name + " -n " + job.Namespace +
				` --type=merge -p '{"spec":{"runPolicy":{"suspend":false}}}') or install Kueue`
		}
		return s
	case apierrors.IsForbidden(err):
		return "<unknown>: you may not list Kueue's Workloads (workloads." + queueing.WorkloadListGVK.Group + ") in namespace " + job.Namespace +
			", so describe cannot say why the job waits; ask for get and list on them"
	case err != nil:
		return "<unknown>: " + err.Error()
	}
	s := "<none>: Kueue is installed but has made no Workload for this job, and admits no job without one; its TFJob integration may be off " +
		`(Kueue's configuration must list "kubeflow.org/tfjob" in integrations.frameworks): run backfill doctor`
	if suspended {
		s += "; until then the job stays suspended"
	}
	return s
}
