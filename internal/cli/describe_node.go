package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/clusterview"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/gpuloan"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// nodeDescription is what `describe node` shows: a node's reclaimed
// capacity, the formula behind it, and who holds it.
type nodeDescription struct {
	node   *corev1.Node
	pods   []corev1.Pod
	events []corev1.Event // oldest first, at most maxEvents
	// jobs are the TFJobs of the node's GPU pods, by namespace/name, for
	// their GPU loans' state; jobErrs say why one could not be read.
	jobs    map[string]*kubeflowv1.TFJob
	jobErrs map[string]error
}

func gatherNodeDescription(ctx context.Context, k *kube, name string) (*nodeDescription, error) {
	var node corev1.Node
	if err := k.client.Get(ctx, client.ObjectKey{Name: name}, &node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("node %q not found", name)
		}
		return nil, fmt.Errorf("getting node %s: %w", name, err)
	}
	pods, err := k.clientset.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.AndSelectors(fields.OneTermEqualSelector("spec.nodeName", name),
			fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
			fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed))).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of node %s: %w", name, err)
	}
	events, err := k.clientset.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.AndSelectors(fields.OneTermEqualSelector("involvedObject.kind", "Node"),
			fields.OneTermEqualSelector("involvedObject.name", name)).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("listing the events of node %s: %w", name, err)
	}
	sort.SliceStable(events.Items, func(i, j int) bool { return eventTime(&events.Items[i]).Before(eventTime(&events.Items[j])) })
	if n := len(events.Items); n > maxEvents {
		events.Items = events.Items[n-maxEvents:]
	}
	d := &nodeDescription{node: &node, pods: pods.Items, events: events.Items}
	d.readLoanJobs(ctx, k)
	return d, nil
}

// readLoanJobs reads the TFJobs whose pods hold GPUs on the node, for
// their loans' state. A job that cannot be read is noted, not fatal: the
// rest of the node's description stands without it.
func (d *nodeDescription) readLoanJobs(ctx context.Context, k *kube) {
	d.jobs, d.jobErrs = map[string]*kubeflowv1.TFJob{}, map[string]error{}
	for i := range d.pods {
		p := &d.pods[i]
		name, ok := colocation.ControllingTFJob(p)
		key := p.Namespace + "/" + name
		if !ok || gpuloan.GPUsOf(p) <= 0 || d.jobs[key] != nil || d.jobErrs[key] != nil {
			continue
		}
		var job kubeflowv1.TFJob
		switch err := k.client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: name}, &job); {
		case apierrors.IsNotFound(err):
		case err != nil:
			d.jobErrs[key] = err
		default:
			d.jobs[key] = &job
		}
	}
}

// renderNodeDescription writes describe node's report as seen at now.
func renderNodeDescription(out io.Writer, d *nodeDescription, now time.Time) error {
	w := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	n := d.node
	published := colocation.BatchOf(n.Status.Allocatable)
	fmt.Fprintf(w, "Node:\t%s\n", n.Name)
	fmt.Fprintf(w, "Reclaimed capacity:\t%s %s, %s %s\n",
		colocation.ResourceBatchCPU, colocation.CPUString(published.MilliCPU),
		colocation.ResourceBatchMemory, colocation.MemoryString(published.Memory))
	if capacity := colocation.BatchOf(n.Status.Capacity); capacity != published {
		fmt.Fprintf(w, "\tallocatable, against %s in capacity: the kubelet resets allocatable to capacity, so it will read that\n", capacity)
	}
	e, ok, err := reclaim.ReadExplanation(n.Annotations)
	switch {
	case err != nil:
		fmt.Fprintf(w, "Explanation:\tunreadable: %v\n", err)
	case !ok:
		fmt.Fprintf(w, "Explanation:\tnone: no manager with --reclaim has decided this node yet (annotation %s)\n", reclaim.ExplanationAnnotation)
	default:
		writeExplanation(w, e, now)
	}
	writeGPULoans(w, d, now)
	writeNodePods(w, d.pods)
	writeNodeEvents(w, d.events, now)
	return w.Flush()
}

// writeExplanation writes the decision behind the published capacity: its
// state, why it moved, and the formula with every input.
func writeExplanation(w io.Writer, e reclaim.Explanation, now time.Time) {
	at := metav1.NewTime(e.At)
	fmt.Fprintf(w, "State:\t%s\n", stateInWords(e))
	fmt.Fprintf(w, "Last change:\t%s: %s\n", timestamp(at, now), e.Why)
	if e.CooldownUntil.After(now) {
		fmt.Fprintf(w, "Cool-down:\tuntil %s (%s left): no room for new offline pods after an eviction\n",
			e.CooldownUntil.UTC().Format(time.RFC1123Z), e.CooldownUntil.Sub(now).Round(time.Second))
	}
	if h := e.Online; h != nil {
		writeHold(w, h, now)
	}
	if e.State == reclaim.StateStale && e.Target.IsZero() && e.OnlinePeak.IsZero() {
		return // no usage: the formula has no inputs
	}
	fmt.Fprintln(w, "Formula (at the last change):")
	fmt.Fprintln(w, "  \tCPU\tMEMORY\t")
	row := func(label string, r reclaim.Resources, note string) {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", label, colocation.CPUString(r.MilliCPU), colocation.MemoryString(r.Memory), note)
	}
	system := e.Reserved.Max(e.System)
	row("capacity", e.Capacity, "")
	row("- margin", e.Margin, fmt.Sprintf("%d%% CPU, %d%% memory (--reclaim-cpu-margin, --reclaim-memory-margin)", percent(e.Margin.MilliCPU, e.Capacity.MilliCPU), percent(e.Margin.Memory, e.Capacity.Memory)))
	row("- system", system, fmt.Sprintf("the larger of kubelet reserved (%s) and measured use beyond pods (%s)", e.Reserved, e.System))
	row("- online peak", e.OnlinePeak, "the most online pods used together over --reclaim-window")
	row("- offline on requests", e.OnRequests, "offline pods that run on cpu and memory requests")
	row("= target", e.Target, "")
	row("held by offline pods", e.Held, "their backfill.dev/batch-* requests, terminating pods not counted")
	if !e.Evicting.IsZero() {
		row("evicted", e.Evicting, "to bring what offline pods hold within the target")
	}
	row("published", e.Published, "moves to the target at once when it falls, by --reclaim-growth-per-minute when it rises, never below what pods hold")
}

// writeHold says why online pods hold the node back, and what comes next.
func writeHold(w io.Writer, h *reclaim.OnlineHold, now time.Time) {
	fmt.Fprintf(w, "Held back:\tsince %s by %s: %s\n", timestamp(metav1.NewTime(h.Since), now), h.Signal, h.Why)
	next := "no growth; after --reclaim-online-evict-after of harm, a step of CPU is given back by evicting, then again after each cool-down"
	if !h.HealthySince.IsZero() {
		next = "healthy since " + timestamp(metav1.NewTime(h.HealthySince), now) + "; grows again once healthy for --reclaim-online-recover-after"
	}
	fmt.Fprintf(w, "  \tat most %s of batch CPU, %d step(s) given back; %s\n", colocation.CPUString(h.MilliCPU), h.Steps, next)
}

// stateInWords says whether the capacity follows usage, and how fresh its
// usage was.
func stateInWords(e reclaim.Explanation) string {
	usage := "no usage sample"
	if !e.UsageAt.IsZero() {
		usage = "newest usage sample " + e.At.Sub(e.UsageAt).Round(time.Second).String() + " old at the last change"
	}
	if e.State == reclaim.StateStale {
		return "Stale (frozen: no growth, no evictions until usage is current; " + usage + ")"
	}
	return "Fresh (follows usage; " + usage + ")"
}

func percent(part, whole int64) int64 {
	if whole == 0 {
		return 0
	}
	return (100*part + whole/2) / whole
}

// writeNodePods sums the node's pods by tier and lists the offline ones.
func writeNodePods(w io.Writer, pods []corev1.Pod) {
	var online, offline int
	var onlineRequests corev1.ResourceList
	fmt.Fprintln(w, "Offline pods:")
	fmt.Fprintln(w, "  NAMESPACE\tPOD\tTFJOB\tRECLAIMED CPU\tRECLAIMED MEMORY\tPHASE")
	for i := range pods {
		p := &pods[i]
		requests := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		if colocation.PodTier(p, colocation.DefaultOfflinePriorityClass) == colocation.TierOnline {
			online++
			onlineRequests = addLists(onlineRequests, requests)
			continue
		}
		offline++
		job, _ := colocation.ControllingTFJob(p)
		b := colocation.BatchOf(requests)
		phase := string(p.Status.Phase)
		if p.DeletionTimestamp != nil {
			phase = "Terminating"
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\n", p.Namespace, p.Name, orNone(job), colocation.CPUString(b.MilliCPU), colocation.MemoryString(b.Memory), phase)
	}
	if offline == 0 {
		fmt.Fprintln(w, "  <none>")
	}
	cpu, mem := onlineRequests[corev1.ResourceCPU], onlineRequests[corev1.ResourceMemory]
	fmt.Fprintf(w, "Online pods:\t%d, requesting cpu %s, memory %s\n", online, cpu.String(), mem.String())
}

func addLists(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, l := range []corev1.ResourceList{a, b} {
		for name, q := range l {
			sum := out[name]
			sum.Add(q)
			out[name] = sum
		}
	}
	return out
}

// writeNodeEvents lists the node's recent events: freezes and resumptions
// of its reclaimed capacity among them.
func writeNodeEvents(w io.Writer, events []corev1.Event, now time.Time) {
	fmt.Fprintln(w, "Events:")
	if len(events) == 0 {
		fmt.Fprintln(w, "  <none>")
		return
	}
	fmt.Fprintln(w, "  TYPE\tREASON\tAGE\tMESSAGE")
	for i := range events {
		e := &events[i]
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", e.Type, e.Reason, age(metav1.NewTime(eventTime(e)), now), e.Message)
	}
}

// writeGPULoans writes, for a node with GPUs, its pool and the GPUs
// training holds there on loan (internal/gpuloan), by job, with each
// loan's state: told to return by its deadline, or paused.
func writeGPULoans(w io.Writer, d *nodeDescription, now time.Time) {
	gpus := d.node.Status.Allocatable[clusterview.ResourceGPU]
	if gpus.IsZero() {
		return
	}
	pool := gpuloan.PoolOfNode(d.node.Labels)
	loans := gpuloan.LoansOnNode(d.pods, d.jobs, colocation.DefaultOfflinePriorityClass)
	lent := 0
	for _, l := range loans {
		lent += l.GPUs
	}
	fmt.Fprintf(w, "GPU loans:\tpool %s (label %s), %d of %d GPUs lent to training\n", pool, colocation.GPUModelLabel, lent, gpus.Value())
	if len(loans) == 0 {
		fmt.Fprintln(w, "  <none>")
		return
	}
	fmt.Fprintln(w, "  TFJOB\tGPUS\tLOAN")
	for _, l := range loans {
		fmt.Fprintf(w, "  %s\t%d\t%s\n", l.Job, l.GPUs, loanInWords(l, d.jobErrs[l.Job], now))
	}
}

// loanInWords says where a job's loan stands.
func loanInWords(l gpuloan.NodeLoan, jobErr error, now time.Time) string {
	s := l.State
	switch {
	case jobErr != nil:
		return fmt.Sprintf("state unknown: reading the TFJob failed: %v", jobErr)
	case l.StateErr != nil:
		return fmt.Sprintf("state unreadable: %v", l.StateErr)
	case s.Phase == gpuloan.PhaseReturning:
		left := "passed"
		if s.Deadline.After(now) {
			left = s.Deadline.Sub(now).Round(time.Second).String() + " left"
		}
		out := fmt.Sprintf("returning to online: stop notice %s, GPUs back by %s (%s)",
			s.NoticeAt.UTC().Format(time.RFC1123Z), s.Deadline.UTC().Format(time.RFC1123Z), left)
		if s.Late {
			out += "; late: online pods wait for these GPUs"
		}
		return out
	case s.Phase == gpuloan.PhasePaused:
		// Its pods are on their way out.
		return "paused: " + s.PausedMessage()
	case s.Phase == gpuloan.PhaseLent:
		return "lent, resumed " + s.ResumedAt.UTC().Format(time.RFC1123Z)
	}
	return "lent"
}
