//go:build integration

package doctor

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

const gib = 1 << 30

// Reclaimed capacity, written by hand as the manager's reclaim controller
// would write it (the suite runs the manager without it): the nodes'
// backfill.dev/batch-* capacity in their status and the explanation in
// their annotation. A TFJob pod asking for more reclaimed CPU than any
// node has free waits with the real scheduler's "Insufficient
// backfill.dev/batch-cpu", and doctor explains it with the numbers and
// why (WARN); a node whose usage went stale is a WARN of reclaim-usage;
// with nothing published at all, the pod is a FAIL. (The scheduler does
// not try again on a node change that still leaves the pod unfit, so the
// capacity is published before the pod exists, for its message to count
// it.)
func testReclaimedCapacity(t *testing.T) {
	ns := newNamespace(t, "reclaim")
	t.Cleanup(func() { unpublish(t, cpuNode, gpuNode) })

	// cpu-0 publishes 4 CPU of its 16: online pods used up to 10.4; an
	// offline pod holds 1 CPU of it. gpu-0 publishes 2 CPU.
	capacity := colocation.Resources{MilliCPU: 16000, Memory: 64 * gib}
	publish(t, cpuNode, colocation.Resources{MilliCPU: 4000, Memory: 16 * gib}, reclaim.Explanation{
		State: reclaim.StateFresh, At: time.Now().Add(-time.Minute), Why: "shrank at once to the target: online use rose",
		Capacity: capacity, Margin: capacity.Percent(10, 20), OnlinePeak: colocation.Resources{MilliCPU: 10400, Memory: 35 * gib},
		Target: colocation.Resources{MilliCPU: 4000, Memory: 16 * gib}, Published: colocation.Resources{MilliCPU: 4000, Memory: 16 * gib},
	})
	gpuFresh := reclaim.Explanation{
		State: reclaim.StateFresh, At: time.Now().Add(-time.Minute), Why: "unchanged: within the minimum change of the target",
		Capacity: colocation.Resources{MilliCPU: 32000, Memory: 128 * gib}, Margin: colocation.Resources{MilliCPU: 3200, Memory: 25 * gib},
		OnlinePeak: colocation.Resources{MilliCPU: 26800, Memory: 95 * gib},
		Target:     colocation.Resources{MilliCPU: 2000, Memory: 8 * gib}, Published: colocation.Resources{MilliCPU: 2000, Memory: 8 * gib},
	}
	publish(t, gpuNode, colocation.Resources{MilliCPU: 2000, Memory: 8 * gib}, gpuFresh)
	create(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "holder"},
		Spec: corev1.PodSpec{NodeName: cpuNode, Containers: []corev1.Container{{Name: "main", Image: "busybox", Resources: corev1.ResourceRequirements{
			Requests: quantities(string(colocation.ResourceBatchCPU), "1000"), Limits: quantities(string(colocation.ResourceBatchCPU), "1000"),
		}}}},
	})
	// The pods the operator makes with --reclaim: cpu and memory moved to
	// the batch resources. The nodes publish too little reclaimed CPU.
	create(t, makeJob(ns, "big", 1, quantities(string(colocation.ResourceBatchCPU), "6000", string(colocation.ResourceBatchMemory), "8Gi")))
	waitFor(t, "the scheduler to find too little reclaimed CPU", podsAre(ns, "big", 1, func(p *corev1.Pod) bool {
		m := scheduledMessage(p)
		return strings.Contains(m, "Insufficient backfill.dev/batch-cpu") && !strings.Contains(m, "batch-memory")
	}))

	r := doctorJSON(t, 0, "big", "-n", ns)
	short := r.mustFind(t, "pending-resources", "WARN", "tfjob reclaim/big",
		"1 pod(s) Pending (e.g. big-worker-0): each asks 6 CPU and 8Gi memory of reclaimed capacity (the scheduler finds too little backfill.dev/batch-cpu)",
		"the most reclaimed CPU free on any node is 3 CPU (cpu-0 publishes 4, its pods hold 1)",
		"no node publishes that much: the most is 4 CPU",
		"on cpu-0, reclaimed CPU = capacity 16 - margin 1600m - system 0 - online peak 10400m - offline pods on requests 0 = target 4, published 4",
		"online pods use the rest, so the pods start when online use falls")
	for _, want := range []string{"wait for online use to fall", "backfill.dev/capacity: requested", "`backfill describe node cpu-0` shows the formula"} {
		if !strings.Contains(short.Fix, want) {
			t.Errorf("fix %q: want %q in it", short.Fix, want)
		}
	}
	r.mustFind(t, "reclaim-usage", "OK", "", "every one of 2 node(s) with reclaimed capacity follows current usage (Fresh): 6 CPU and 24Gi memory of reclaimed capacity published in all")

	// gpu-0's usage went stale: frozen, a WARN naming it.
	stale := gpuFresh
	stale.State, stale.At, stale.Why = reclaim.StateStale, time.Now().Add(-4*time.Minute), "frozen: no usage for the node"
	publish(t, gpuNode, colocation.Resources{MilliCPU: 2000, Memory: 8 * gib}, stale)
	r = doctorJSON(t, 0, "big", "-n", ns)
	frozen := r.mustFind(t, "reclaim-usage", "WARN", "",
		"1 of 2 node(s) with reclaimed capacity have it frozen on stale usage (gpu-0 for 4m;", `gpu-0 says "frozen: no usage for the node"`)
	for _, want := range []string{"kubectl top nodes", "docs/install.md", "backfill describe node gpu-0"} {
		if !strings.Contains(frozen.Fix, want) {
			t.Errorf("fix %q: want %q in it", frozen.Fix, want)
		}
	}

	// The manager stopped publishing (no --reclaim, no usage): nothing on
	// any node. The scheduler's message still holds, and waiting is no fix.
	unpublish(t, cpuNode, gpuNode)
	r = doctorJSON(t, 1, "big", "-n", ns)
	none := r.mustFind(t, "pending-resources", "FAIL", "tfjob reclaim/big",
		"each asks 6 CPU and 8Gi memory of reclaimed capacity",
		"no node publishes any reclaimed capacity (backfill.dev/batch-cpu and backfill.dev/batch-memory are 0 or missing on all 2 schedulable node(s)")
	if !strings.Contains(none.Fix, "is the manager running with --reclaim and a working usage source?") {
		t.Errorf("fix %q: want it to ask after the manager's --reclaim and usage source", none.Fix)
	}
	r.mustFind(t, "reclaim-usage", "SKIP", "", "no node has a reclaimed-capacity explanation")
}

// publish writes a node's reclaimed capacity as the reclaim controller
// does: the batch resources in its status capacity and allocatable, with
// a status patch, then its explanation annotation.
func publish(t *testing.T, name string, r colocation.Resources, e reclaim.Explanation) {
	t.Helper()
	// batch-cpu counts milli-CPU in whole units; batch-memory bytes.
	list := map[string]string{
		string(colocation.ResourceBatchCPU):    strconv.FormatInt(r.MilliCPU, 10),
		string(colocation.ResourceBatchMemory): strconv.FormatInt(r.Memory, 10),
	}
	explanation, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	patchNode(t, name, true, map[string]any{"status": map[string]any{"capacity": list, "allocatable": list}})
	patchNode(t, name, false, map[string]any{"metadata": map[string]any{"annotations": map[string]string{reclaim.ExplanationAnnotation: string(explanation)}}})
}

// unpublish removes what publish wrote, so that later cases see nodes
// without reclaimed capacity.
func unpublish(t *testing.T, names ...string) {
	t.Helper()
	gone := map[string]any{string(colocation.ResourceBatchCPU): nil, string(colocation.ResourceBatchMemory): nil}
	for _, name := range names {
		patchNode(t, name, true, map[string]any{"status": map[string]any{"capacity": gone, "allocatable": gone}})
		patchNode(t, name, false, map[string]any{"metadata": map[string]any{"annotations": map[string]any{reclaim.ExplanationAnnotation: nil}}})
	}
}

// patchNode merge-patches a node, or its status.
func patchNode(t *testing.T, name string, status bool, patch map[string]any) {
	t.Helper()
	data, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	raw := client.RawPatch(types.MergePatchType, data)
	if status {
		err = apiServer.Client.Status().Patch(ctx, node, raw)
	} else {
		err = apiServer.Client.Patch(ctx, node, raw)
	}
	if err != nil {
		t.Fatalf("patching node %s (status %v): %v", name, status, err)
	}
}
