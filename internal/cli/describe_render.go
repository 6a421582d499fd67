package cli

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/controller/tfjob"
)

// renderDescription writes describe's report of d as seen at now.
func renderDescription(out io.Writer, d *description, now time.Time) error {
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	job := d.job
	fields := [][2]string{
		{"Name", job.Name},
		{"Namespace", job.Namespace},
		{"Created", timestamp(job.CreationTimestamp, now)},
		{"State", jobStateInWords(job)},
		{"Priority Class", priorityClassInWords(job, d.pods)},
		{"Started", timestampOrNone(job.Status.StartTime, now)},
		{"Completed", timestampOrNone(job.Status.CompletionTime, now)},
		{"Restarts", fmt.Sprint(jobRestarts(job, d.pods))},
		{"Disruptions", fmt.Sprint(job.Status.Disruptions)},
		{"Capacity", capacityInWords(job, d.pods)},
		{"Run Policy", runPolicyInWords(&job.Spec.RunPolicy)},
		{"Success Policy", successPolicyInWords(job)},
	}
	for _, f := range fields {
		fmt.Fprintf(w, "%s:\t%s\n", f[0], f[1])
	}
	sections := []func(io.Writer, *description, time.Time){
		writeQueue, writeProgress, writeGoodput, writeReplicaSpecs, writeConditions, writeReplicas, writeWaiting, writePlacement, writeTFConfig, writeEvents,
	}
	for _, section := range sections {
		section(w, d, now)
	}
	return w.Flush()
}

// capacityInWords says whether the job's pods run in reclaimed capacity,
// from what its pods were given, else from its annotation.
func capacityInWords(job *kubeflowv1.TFJob, pods []corev1.Pod) string {
	if err := colocation.ValidateCapacity(job.Annotations); err != nil {
		return "invalid: " + err.Error() + "; the operator holds the job until it is fixed"
	}
	if !colocation.OnReclaimedCapacity(job.Annotations) {
		return "requested: pods keep their templates' cpu and memory requests (annotation " + colocation.CapacityAnnotation + ": " + colocation.CapacityRequested + ")"
	}
	if len(pods) == 0 {
		return "reclaimed, unless the manager runs with --reclaim=false"
	}
	for i := range pods {
		if _, ok := pods[i].Annotations[colocation.OriginalResourcesAnnotation]; ok {
			return "reclaimed: pods request " + string(colocation.ResourceBatchCPU) + " and " + string(colocation.ResourceBatchMemory) +
				" in place of the cpu and memory requests below, which the templates' limits bound (kept on each pod in " + colocation.OriginalResourcesAnnotation + ")"
		}
	}
	return "requested: the pods were created with cpu and memory requests (before reclaimed capacity was on, or the manager runs with --reclaim=false)"
}

func timestamp(t metav1.Time, now time.Time) string {
	return t.UTC().Format(time.RFC1123Z) + " (" + age(t, now) + " ago)"
}

func timestampOrNone(t *metav1.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return "<none>"
	}
	return timestamp(*t, now)
}

// runPolicyInWords is the run policy the manager applies: the job's, with
// the manager's defaults where it sets none.
func runPolicyInWords(rp *kubeflowv1.RunPolicy) string {
	clean := cleanPodPolicyInWords(rp)
	backoff := "unlimited"
	if rp.BackoffLimit != nil {
		backoff = fmt.Sprint(*rp.BackoffLimit)
	}
	parts := []string{"cleanPodPolicy=" + clean, "backoffLimit=" + backoff}
	if rp.ActiveDeadlineSeconds != nil {
		parts = append(parts, fmt.Sprintf("activeDeadlineSeconds=%d", *rp.ActiveDeadlineSeconds))
	}
	if rp.TTLSecondsAfterFinished != nil {
		parts = append(parts, fmt.Sprintf("ttlSecondsAfterFinished=%d", *rp.TTLSecondsAfterFinished))
	}
	if rp.Suspend != nil && *rp.Suspend {
		parts = append(parts, "suspended")
	}
	return strings.Join(parts, ", ")
}

// successPolicyInWords says when the manager deems the job succeeded: a
// chief or master that runs a replica decides, whatever the success
// policy says; else worker 0, or every worker under AllWorkers.
func successPolicyInWords(job *kubeflowv1.TFJob) string {
	allWorkers := job.Spec.SuccessPolicy != nil && *job.Spec.SuccessPolicy == kubeflowv1.SuccessPolicyAllWorkers
	for _, t := range []kubeflowv1.ReplicaType{kubeflowv1.ReplicaTypeChief, kubeflowv1.ReplicaTypeMaster} {
		if job.Spec.TFReplicaSpecs[t].ReplicaCount() > 0 {
			lower := strings.ToLower(string(t))
			if allWorkers {
				return "AllWorkers, ignored beside a " + lower + ": succeeds when the " + lower + " has"
			}
			return "default (succeeds when the " + lower + " has)"
		}
	}
	if allWorkers {
		return "AllWorkers (succeeds when every worker has)"
	}
	return "default (succeeds when worker 0 has)"
}

func writeReplicaSpecs(w io.Writer, d *description, _ time.Time) {
	fmt.Fprintln(w, "Replica Specs:")
	fmt.Fprintln(w, "  TYPE\tREPLICAS\tRESTART POLICY\tIMAGE\tREQUESTS")
	for _, rtype := range replicaTypes(d.job) {
		spec := d.job.Spec.TFReplicaSpecs[rtype]
		image, requests := "<none>", "<none>"
		for _, c := range spec.Template.Spec.Containers {
			if c.Name == kubeflowv1.ContainerName {
				image, requests = c.Image, resourcesInWords(c.Resources.Requests)
			}
		}
		fmt.Fprintf(w, "  %s\t%d\t%s\t%s\t%s\n", rtype, spec.ReplicaCount(), restartPolicyOf(spec), image, requests)
	}
}

// restartPolicyOf is the replica's restart policy; the manager treats an
// empty one (which the CRD defaults) as Never.
func restartPolicyOf(spec *kubeflowv1.ReplicaSpec) string {
	if spec.RestartPolicy == "" {
		return string(kubeflowv1.RestartPolicyNever)
	}
	return string(spec.RestartPolicy)
}

func resourcesInWords(list corev1.ResourceList) string {
	if len(list) == 0 {
		return "<none>"
	}
	var parts []string
	for name, q := range list {
		parts = append(parts, string(name)+"="+q.String())
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func writeConditions(w io.Writer, d *description, now time.Time) {
	fmt.Fprintln(w, "Conditions:")
	if len(d.job.Status.Conditions) == 0 {
		fmt.Fprintln(w, "  <none>: the operator has not seen this TFJob yet")
		return
	}
	fmt.Fprintln(w, "  TYPE\tSTATUS\tREASON\tAGE\tMESSAGE")
	for _, c := range d.job.Status.Conditions {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, orNone(c.Reason), age(c.LastTransitionTime, now), c.Message)
	}
}

// replicaRow is one expected replica and the pod that plays it, if any.
type replicaRow struct {
	rtype string // lowercase
	index int
	pod   *corev1.Pod
}

// replicaRows lists every replica the spec asks for, with its pods (a
// replica being replaced has two), then pods the spec no longer asks for.
func replicaRows(d *description) []replicaRow {
	byReplica := map[string][]*corev1.Pod{}
	for i := range d.pods {
		byReplica[replicaName(&d.pods[i])] = append(byReplica[replicaName(&d.pods[i])], &d.pods[i])
	}
	var rows []replicaRow
	for _, rtype := range replicaTypes(d.job) {
		lower := strings.ToLower(string(rtype))
		for i := range int(d.job.Spec.TFReplicaSpecs[rtype].ReplicaCount()) {
			key := lower + "-" + strconv.Itoa(i)
			if len(byReplica[key]) == 0 {
				rows = append(rows, replicaRow{rtype: lower, index: i})
			}
			for _, pod := range byReplica[key] {
				rows = append(rows, replicaRow{rtype: lower, index: i, pod: pod})
			}
			delete(byReplica, key)
		}
	}
	for i := range d.pods {
		if _, left := byReplica[replicaName(&d.pods[i])]; left {
			rows = append(rows, replicaRow{rtype: d.pods[i].Labels[kubeflowv1.ReplicaTypeLabel], index: replicaIndex(&d.pods[i]), pod: &d.pods[i]})
		}
	}
	return rows
}

func writeReplicas(w io.Writer, d *description, _ time.Time) {
	fmt.Fprintln(w, "Replicas:")
	fmt.Fprintln(w, "  TYPE\tINDEX\tPOD\tPHASE\tREADY\tRESTARTS\tNODE\tTASK")
	for _, r := range replicaRows(d) {
		if r.pod == nil {
			fmt.Fprintf(w, "  %s\t%d\t<none>\t-\t-\t-\t-\t-\n", r.rtype, r.index)
			continue
		}
		phase := string(r.pod.Status.Phase)
		if r.pod.DeletionTimestamp != nil {
			phase = "Terminating"
		} else if reason := waitingReason(r.pod); reason != "" {
			phase = reason
		}
		fmt.Fprintf(w, "  %s\t%d\t%s\t%s\t%t\t%d\t%s\t%s\n", r.rtype, r.index, r.pod.Name, phase,
			podReady(r.pod), tfjob.ContainerRestarts(r.pod), orNone(r.pod.Spec.NodeName), orNone(taskOf(r.pod)))
	}
}

// waitingReason is the reason a container waits, as kubectl's STATUS
// column shows it (CrashLoopBackOff, ImagePullBackOff).
func waitingReason(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Waiting != nil && cs.State.Waiting.Reason != "" {
			return cs.State.Waiting.Reason
		}
	}
	return ""
}

func writeWaiting(w io.Writer, d *description, _ time.Time) {
	var lines []string
	if c := jobCondition(d.job, kubeflowv1.JobCreated); c != nil && c.Status == corev1.ConditionFalse && c.Message != "" {
		lines = append(lines, "  pods not created: "+c.Message)
	}
	for _, r := range replicaRows(d) {
		if r.pod == nil {
			continue
		}
		why := whyPending(r.pod)
		if why == "" {
			why = whyCrashing(r.pod, d.job.Name)
		}
		if why != "" {
			lines = append(lines, fmt.Sprintf("  %s-%d (%s): %s", r.rtype, r.index, r.pod.Name, why))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "Waiting:")
	for _, line := range lines {
		fmt.Fprintln(w, line)
	}
}

func writePlacement(w io.Writer, d *description, _ time.Time) {
	fmt.Fprintln(w, "Placement:")
	byNode := map[string][]string{}
	var nodes []string
	for i := range d.pods {
		pod := &d.pods[i]
		node := pod.Spec.NodeName
		if node == "" {
			node = "<unscheduled>"
		}
		if _, seen := byNode[node]; !seen {
			nodes = append(nodes, node)
		}
		byNode[node] = append(byNode[node], replicaName(pod))
	}
	if len(nodes) == 0 {
		fmt.Fprintln(w, "  <no pods>")
		return
	}
	sort.Strings(nodes)
	for _, node := range nodes {
		fmt.Fprintf(w, "  %s:\t%s\n", node, strings.Join(byNode[node], ", "))
	}
}

func writeTFConfig(w io.Writer, d *description, _ time.Time) {
	fmt.Fprintln(w, "TF_CONFIG:")
	cluster := clusterSizes(d.job, d.pods)
	if cluster == "" {
		fmt.Fprintln(w, "  <none>: a job of one replica gets no TF_CONFIG")
		return
	}
	fmt.Fprintf(w, "  Cluster:\t%s\n", cluster)
}

func writeEvents(w io.Writer, d *description, now time.Time) {
	fmt.Fprintln(w, "Events:")
	if len(d.events) == 0 {
		fmt.Fprintln(w, "  <none>")
		return
	}
	fmt.Fprintln(w, "  TYPE\tREASON\tAGE\tFROM\tOBJECT\tMESSAGE")
	for i := range d.events {
		e := &d.events[i]
		when := age(metav1.NewTime(eventTime(e)), now)
		if count := eventCount(e); count > 1 {
			when += fmt.Sprintf(" (x%d)", count)
		}
		from := e.Source.Component
		if from == "" {
			from = e.ReportingController
		}
		object := strings.ToLower(e.InvolvedObject.Kind) + "/" + e.InvolvedObject.Name
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\n", e.Type, e.Reason, when, orNone(from), object, strings.TrimSpace(e.Message))
	}
}

func eventCount(e *corev1.Event) int32 {
	if e.Series != nil {
		return e.Series.Count
	}
	return e.Count
}
