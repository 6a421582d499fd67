package doctor

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// ofDeployment is p as a pod of Deployment name (through its ReplicaSet)
// whose template declares a P99 objective of 200 ms.
func ofDeployment(p corev1.Pod, name string) corev1.Pod {
	p.Labels = map[string]string{"pod-template-hash": "7d9f"}
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name + "-7d9f", Controller: ptr.To(true)}}
	p.Annotations = map[string]string{"backfill.dev/latency-objective": "200ms"}
	return p
}

func TestCheckOnlineSignal(t *testing.T) {
	fresh := reclaim.Explanation{State: reclaim.StateFresh, At: now, Why: "grew to the target"}
	heldFor := func(signal, why string, since time.Duration, steps int, healthy time.Duration) reclaim.Explanation {
		e := fresh
		e.Online = &reclaim.OnlineHold{Signal: signal, Why: why, Since: now.Add(-since), MilliCPU: 3000, Steps: steps}
		if healthy > 0 {
			e.Online.HealthySince = now.Add(-healthy)
		}
		return e
	}
	latency := heldFor(reclaim.SignalLatency, "workload web/shop has P99 300ms, above its objective 200ms", 12*time.Minute, 2, 0)
	latency.CooldownUntil = now.Add(3 * time.Minute)
	waiting := heldFor(reclaim.SignalCPUWait, "online pods wait 0.30 s per second for a CPU together (more than 0.1)", 30*time.Minute, 0, 4*time.Minute)
	justHeld := heldFor(reclaim.SignalLatency, "workload web/shop has P99 300ms, above its objective 200ms", time.Minute, 0, 0)
	cpu := func(name string, e reclaim.Explanation) corev1.Node { return explained(node(name, "cpu", "16"), e) }

	type want struct {
		status   Status
		object   string
		findings []string
		absent   []string
		fix      []string
	}
	cases := map[string]struct {
		nodes     []corev1.Node
		pods      []corev1.Pod
		forbidden map[string]bool
		want      []want
	}{
		"nothing held, no workload opted in": {
			nodes: []corev1.Node{cpu("cpu-0", fresh), node("cpu-1", "cpu", "16")},
			pods:  []corev1.Pod{onlinePod("web-0", 0).on("cpu-0").obj()},
			want: []want{{status: StatusOK, findings: []string{
				"no node's reclaimed capacity is held back by its online pods' latency or CPU wait",
				"no pod declares a latency objective (annotation backfill.dev/latency-objective), so only online pods' CPU wait can hold a node back",
				"annotate its Deployment's or StatefulSet's pod template with backfill.dev/latency-objective: 200ms",
			}}},
		},
		"nothing held, one workload opted in with two pods": {
			nodes: []corev1.Node{cpu("cpu-0", fresh)},
			pods: []corev1.Pod{
				ofDeployment(onlinePod("shop-7d9f-a", 0).on("cpu-0").obj(), "shop"),
				ofDeployment(onlinePod("shop-7d9f-b", 0).on("cpu-0").obj(), "shop"),
			},
			want: []want{{status: StatusOK, findings: []string{"; 1 workload(s) declare a latency objective (web/shop)"}, absent: []string{"annotate"}}},
		},
		"nothing held, other namespaces' pods unreadable: no word on opting in": {
			nodes:     []corev1.Node{cpu("cpu-0", fresh)},
			forbidden: map[string]bool{readAllPods: true},
			want:      []want{{status: StatusOK, absent: []string{"latency objective"}}},
		},
		"two nodes held, the longest first": {
			nodes: []corev1.Node{cpu("cpu-0", latency), cpu("cpu-1", waiting), cpu("cpu-2", fresh)},
			want: []want{
				{
					status: StatusWarn, object: "node cpu-1",
					findings: []string{
						"node cpu-1 is held back by its online pods' CPU wait since 2026-11-29T11:30:00Z (30m): online pods wait 0.30 s per second for a CPU together (more than 0.1); " +
							"it offers offline pods at most 3 CPU while held; the signal has been healthy since 2026-11-29T11:56:00Z (4m): " +
							"it grows again once the signal has been healthy for --reclaim-online-recover-after (default 10m0s), unless the harm returns",
					},
					absent: []string{"given back", "gives back"},
					fix:    []string{"--reclaim-online-cpu-wait", "--cpu-threshold", "`backfill describe node cpu-1` shows the hold"},
				},
				{
					status: StatusWarn, object: "node cpu-0",
					findings: []string{
						"node cpu-0 is held back by its online pods' latency (P99 above the objective) since 2026-11-29T11:48:00Z (12m): " +
							"workload web/shop has P99 300ms, above its objective 200ms; it offers offline pods at most 3 CPU while held, and has given back 2 step(s) by evicting offline pods; " +
							"while the harm lasts it gives back a step (--reclaim-online-step, default 10% of the node's CPU) by evicting offline pods",
						"then another each time the cool-down after an eviction ends (the current one ends in 3m0s); it grows again once the signal has been healthy for --reclaim-online-recover-after",
					},
					fix: []string{`backfill_online_latency_p99_seconds{peers="without_offline"}`, "objective is too tight", "keep offline pods off its nodes", "`backfill describe node cpu-0`"},
				},
			},
		},
		"held a minute ago, nothing given back yet": {
			nodes: []corev1.Node{cpu("cpu-0", justHeld)},
			want: []want{{
				status: StatusWarn, object: "node cpu-0",
				findings: []string{"(60s)", "once the hold has lasted --reclaim-online-evict-after (default 2m0s)"},
				absent:   []string{"has given back", "the current one ends"},
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Nodes, s.Pods, s.Forbidden = tc.nodes, tc.pods, tc.forbidden
			got := checkOnlineSignal(s)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d results, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				r := got[i]
				if r.Check != CheckOnlineSignal || r.Status != w.status || r.Object != w.object {
					t.Errorf("result %d: got %s %s %q, want %s %q", i, r.Check, r.Status, r.Object, w.status, w.object)
				}
				for _, f := range w.findings {
					if !strings.Contains(r.Finding, f) {
						t.Errorf("result %d finding %q: want %q in it", i, r.Finding, f)
					}
				}
				for _, f := range w.absent {
					if strings.Contains(r.Finding, f) {
						t.Errorf("result %d finding %q: want no %q in it", i, r.Finding, f)
					}
				}
				for _, f := range w.fix {
					if !strings.Contains(r.Fix, f) {
						t.Errorf("result %d fix %q: want %q in it", i, r.Fix, f)
					}
				}
			}
		})
	}
}
