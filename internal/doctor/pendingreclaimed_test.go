package doctor

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// TFJob pods on reclaimed capacity request backfill.dev/batch-cpu
// (milli-CPU) and backfill.dev/batch-memory (bytes); the scheduler calls
// them insufficient like any resource, and doctor explains them in CPU and
// memory with the manager's reasons.
func TestCheckPendingOnReclaimedCapacity(t *testing.T) {
	const gib = 1 << 30
	// r-0 publishes 4 CPU and 16Gi: online pods used up to 10.4 CPU of its
	// 16 (less a 10% margin); an offline pod holds 1 CPU and 2Gi of it.
	r0 := reclaim.Explanation{
		State: reclaim.StateFresh, At: now.Add(-2 * time.Minute), Why: "shrank at once to the target: online use rose",
		Capacity: colocation.Resources{MilliCPU: 16000, Memory: 64 * gib}, Margin: colocation.Resources{MilliCPU: 1600, Memory: 12 * gib},
		OnlinePeak: colocation.Resources{MilliCPU: 10400, Memory: 36 * gib},
		Target:     colocation.Resources{MilliCPU: 4000, Memory: 16 * gib}, Published: colocation.Resources{MilliCPU: 4000, Memory: 16 * gib},
	}
	publishing := func(name, cpu, memory string) corev1.Node {
		return node(name, "cpu", "16", "memory", "64Gi", "backfill.dev/batch-cpu", cpu, "backfill.dev/batch-memory", memory)
	}
	withR0 := func(e reclaim.Explanation) []corev1.Node {
		return []corev1.Node{explained(publishing("r-0", "4000", "16Gi"), e), node("r-1", "cpu", "8", "memory", "32Gi", "backfill.dev/batch-cpu", "2000", "backfill.dev/batch-memory", "8Gi")}
	}
	stale := r0
	stale.State, stale.Why, stale.At = reclaim.StateStale, "frozen: no usage for the node", now.Add(-5*time.Minute)
	// Just after the manager starts: no online use, capacity grows from 0
	// toward its target by the growth limit.
	growing := r0
	growing.OnlinePeak, growing.Target, growing.Why = colocation.Resources{}, colocation.Resources{MilliCPU: 14400, Memory: 52 * gib}, "growing toward the target at the growth limit"
	cooling := r0
	cooling.Why, cooling.CooldownUntil = "cooling down after an eviction: no room for new offline pods", now.Add(3*time.Minute)

	job := makeJob("big").workers(2, "backfill.dev/batch-cpu", "6000", "backfill.dev/batch-memory", "8Gi").obj()
	huge := makeJob("huge").workers(1, "backfill.dev/batch-cpu", "20000", "backfill.dev/batch-memory", "8Gi").obj()
	hungry := makeJob("hungry").workers(1, "backfill.dev/batch-cpu", "1000", "backfill.dev/batch-memory", "40Gi").obj()
	gpuJob := makeJob("vision").workers(1, "nvidia.com/gpu", "16", "backfill.dev/batch-cpu", "6000").obj()
	gang := makeJob("gang").workers(4, "backfill.dev/batch-cpu", "1500", "backfill.dev/batch-memory", "4Gi").obj()
	fits := makeJob("fits").workers(1, "backfill.dev/batch-cpu", "3500").obj()
	small := makeJob("small").workers(1, "backfill.dev/batch-cpu", "1000", "backfill.dev/batch-memory", "2Gi").obj()
	holding := jobPod(small, "small-worker-0").on("r-0").obj()
	short := "0/2 nodes are available: 2 Insufficient backfill.dev/batch-cpu."
	pending := func(j kubeflowv1.TFJob, name, message string) corev1.Pod {
		return jobPod(j, name).unschedulable(message).obj()
	}

	cases := map[string]struct {
		nodes        []corev1.Node
		pods         []corev1.Pod
		want         verdict
		wantFindings []string
		wantFix      []string
	}{
		"too little reclaimed CPU: the pods wait for online use to fall": {
			nodes: withR0(r0),
			pods:  []corev1.Pod{holding, pending(job, "big-worker-0", short), pending(job, "big-worker-1", short)},
			want:  verdict{CheckPendingResources, StatusWarn, "tfjob team-a/big"},
			wantFindings: []string{
				"2 pod(s) Pending (e.g. big-worker-0): each asks 6 CPU and 8Gi memory of reclaimed capacity (the scheduler finds too little backfill.dev/batch-cpu)",
				"the most reclaimed CPU free on any node is 3 CPU (r-0 publishes 4, its pods hold 1)",
				"no node publishes that much: the most is 4 CPU; why so little: on r-0, reclaimed CPU = capacity 16 - margin 1600m - system 0 - online peak 10400m - offline pods on requests 0 = target 4, published 4 (shrank at once to the target: online use rose, 2m ago)",
				"online pods use the rest, so the pods start when online use falls",
			},
			wantFix: []string{"wait for online use to fall (reclaimed capacity follows it", "lower the pods' cpu and memory requests", "the TFJob annotation backfill.dev/capacity: requested", "`backfill describe node r-0` shows the formula"},
		},
		"enough published, but other offline pods hold it": {
			nodes: withR0(r0),
			pods:  []corev1.Pod{holding, pending(fits, "fits-worker-0", short)},
			want:  verdict{CheckPendingResources, StatusWarn, "tfjob team-a/fits"},
			wantFindings: []string{
				"the most reclaimed CPU free on any node is 3 CPU (r-0 publishes 4, its pods hold 1)",
				"r-0 publishes 4 CPU, enough for one pod, but offline pods there hold 1 of it: the pods start when those finish or online use falls",
			},
			wantFix: []string{"wait for the offline pods that hold it to finish", "`backfill describe node r-0` shows who holds it"},
		},
		"room now: capacity grew since the scheduler tried": {
			nodes:        withR0(r0),
			pods:         []corev1.Pod{pending(fits, "fits-worker-0", short)},
			want:         verdict{CheckPendingResources, StatusWarn, "tfjob team-a/fits"},
			wantFindings: []string{"each asks 3500m CPU of reclaimed capacity", "the nodes have room for all of the 1 waiting pod(s) now: reclaimed capacity grew since the scheduler last tried"},
			wantFix:      []string{"nothing is broken: the scheduler tries again"},
		},
		"room for part of a gang": {
			nodes: withR0(r0),
			// 1.5 CPU and 4Gi each: r-0 has room for 2 (CPU), r-1 for 1
			// (CPU), not for all 4.
			pods: []corev1.Pod{
				pending(gang, "gang-worker-0", short), pending(gang, "gang-worker-1", "minCount (4) cannot be satisfied: 0 scheduled, 3 remaining"),
				pending(gang, "gang-worker-2", "minCount (4) cannot be satisfied"), pending(gang, "gang-worker-3", "minCount (4) cannot be satisfied"),
			},
			want:         verdict{CheckPendingResources, StatusWarn, "tfjob team-a/gang"},
			wantFindings: []string{"4 pod(s) Pending (e.g. gang-worker-0)", "the nodes have room for 3 of the 4 waiting pod(s) now: a gang starts only when all its pods fit at once"},
		},
		"only the nodes its selector allows count": {
			nodes: func() []corev1.Node {
				nodes := withR0(r0)
				nodes[1].Labels = map[string]string{"pool": "small"}
				return nodes
			}(),
			pods: func() []corev1.Pod {
				p := pending(fits, "fits-worker-0", "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 Insufficient backfill.dev/batch-cpu.")
				p.Spec.NodeSelector = map[string]string{"pool": "small"}
				return []corev1.Pod{p}
			}(),
			want: verdict{CheckPendingResources, StatusWarn, "tfjob team-a/fits"},
			wantFindings: []string{
				"1 pod(s) Pending (e.g. fits-worker-0): on the 1 of 2 node(s) its node selector, affinity and tolerations allow, each asks 3500m CPU",
				"the most reclaimed CPU free on any node is 2 CPU (r-1 publishes 2, its pods hold 0)",
				"no node publishes that much: the most is 2 CPU; why so little: node r-1 has no explanation",
			},
		},
		"too little reclaimed memory": {
			nodes: withR0(r0),
			pods:  []corev1.Pod{holding, pending(hungry, "hungry-worker-0", "0/2 nodes are available: 2 Insufficient backfill.dev/batch-memory.")},
			want:  verdict{CheckPendingResources, StatusWarn, "tfjob team-a/hungry"},
			wantFindings: []string{
				"each asks 1 CPU and 40Gi memory of reclaimed capacity (the scheduler finds too little backfill.dev/batch-memory)",
				"the most reclaimed memory free on any node is 14Gi memory (r-0 publishes 16Gi, its pods hold 2Gi)",
				"reclaimed memory = capacity 64Gi - margin 12Gi - system 0 - online peak 36Gi",
			},
		},
		"more than any node could ever reclaim": {
			nodes:        withR0(r0),
			pods:         []corev1.Pod{pending(huge, "huge-worker-0", short)},
			want:         verdict{CheckPendingResources, StatusFail, "tfjob team-a/huge"},
			wantFindings: []string{"each asks 20 CPU and 8Gi memory", "no node can ever offer that much reclaimed capacity (at most 14400m CPU and 52Gi memory"},
			wantFix:      []string{"at most 14400m CPU and 52Gi memory per pod", "backfill.dev/capacity: requested"},
		},
		"no node publishes any reclaimed capacity": {
			nodes:        []corev1.Node{node("r-0", "cpu", "16"), node("r-1", "cpu", "8")},
			pods:         []corev1.Pod{pending(job, "big-worker-0", short)},
			want:         verdict{CheckPendingResources, StatusFail, "tfjob team-a/big"},
			wantFindings: []string{"no node publishes any reclaimed capacity (backfill.dev/batch-cpu and backfill.dev/batch-memory are 0 or missing on all 2 schedulable node(s); no node has an explanation"},
			wantFix:      []string{"is the manager running with --reclaim and a working usage source?", "reason=ReclaimFrozen", "backfill describe node NODE", "backfill.dev/capacity: requested"},
		},
		"nothing published, the nodes frozen": {
			nodes:        []corev1.Node{explained(node("r-0", "cpu", "16"), stale)},
			pods:         []corev1.Pod{pending(job, "big-worker-0", short)},
			want:         verdict{CheckPendingResources, StatusFail, "tfjob team-a/big"},
			wantFindings: []string{"no node publishes any reclaimed capacity", "node r-0's reclaimed capacity is frozen, for 5m: frozen: no usage for the node"},
		},
		"the node with the most is frozen": {
			nodes:        withR0(stale),
			pods:         []corev1.Pod{pending(job, "big-worker-0", short)},
			want:         verdict{CheckPendingResources, StatusWarn, "tfjob team-a/big"},
			wantFindings: []string{"why so little: node r-0's reclaimed capacity is frozen, for 5m: frozen: no usage for the node: it does not grow until the node's usage is current again (see reclaim-usage)"},
			wantFix:      []string{"restore the manager's usage source (see reclaim-usage)"},
		},
		"capacity still growing toward a target that fits": {
			nodes:        withR0(growing),
			pods:         []corev1.Pod{pending(job, "big-worker-0", short)},
			want:         verdict{CheckPendingResources, StatusWarn, "tfjob team-a/big"},
			wantFindings: []string{"online peak 0 - offline pods on requests 0 = target 14400m, published 4", "it grows toward a target that fits the pods, so they start within minutes"},
			wantFix:      []string{"nothing is broken: wait while reclaimed capacity grows toward its target (--reclaim-growth-per-minute)"},
		},
		"the node with the most cools down after an eviction": {
			nodes:        withR0(cooling),
			pods:         []corev1.Pod{pending(job, "big-worker-0", short)},
			want:         verdict{CheckPendingResources, StatusWarn, "tfjob team-a/big"},
			wantFindings: []string{"(cooling down after an eviction: no room for new offline pods, 2m ago); it offers no room to new offline pods for 3m0s more, after an eviction: the pods may start when the cool-down ends"},
			wantFix:      []string{"wait for the cool-down after the eviction to end (--reclaim-cooldown)"},
		},
		"a gang: the member that lacks room speaks for it": {
			nodes: withR0(r0),
			pods: []corev1.Pod{
				pending(job, "big-worker-0", short),
				pending(job, "big-worker-1", "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining"),
			},
			want:         verdict{CheckPendingResources, StatusWarn, "tfjob team-a/big"},
			wantFindings: []string{"2 pod(s) Pending (e.g. big-worker-0): each asks 6 CPU", "the most reclaimed CPU free on any node is 4 CPU"},
		},
		"GPUs no node has, and reclaimed CPU": {
			nodes: withR0(r0),
			pods:  []corev1.Pod{pending(gpuJob, "vision-worker-0", "0/2 nodes are available: 2 Insufficient backfill.dev/batch-cpu, 2 Insufficient nvidia.com/gpu.")},
			want:  verdict{CheckPendingResources, StatusFail, "tfjob team-a/vision"},
			wantFindings: []string{
				"needs 16 nvidia.com/gpu per pod; the most free on any node is 0 (the largest node has 0): no node can ever fit a pod; each asks 6 CPU of reclaimed capacity",
			},
			wantFix: []string{"lower the nvidia.com/gpu request", "wait for online use to fall"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Nodes, s.Pods = tc.nodes, tc.pods
			s.Jobs = []kubeflowv1.TFJob{job, huge, hungry, gpuJob, fits, gang}
			got := checkPending(s, s.activeJobs())
			if diff := cmp.Diff([]verdict{tc.want}, verdicts(got)); diff != "" {
				t.Fatalf("verdicts (-want +got):\n%s\n%+v", diff, got)
			}
			wantTexts(t, got[0], tc.wantFindings, tc.wantFix)
		})
	}
}
