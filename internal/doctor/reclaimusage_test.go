package doctor

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

func TestCheckReclaimUsage(t *testing.T) {
	fresh := reclaim.Explanation{State: reclaim.StateFresh, At: now.Add(-time.Minute), Why: "grew to the target"}
	stale := func(ago time.Duration, why string) reclaim.Explanation {
		return reclaim.Explanation{State: reclaim.StateStale, At: now.Add(-ago), Why: why}
	}
	publishing := func(name, cpu, memory string) corev1.Node {
		return node(name, "cpu", "16", "memory", "64Gi", "backfill.dev/batch-cpu", cpu, "backfill.dev/batch-memory", memory)
	}
	cases := map[string]struct {
		nodes        []corev1.Node
		wantStatus   Status
		wantFindings []string
		wantFix      []string
	}{
		"every node follows current usage": {
			nodes: []corev1.Node{
				explained(publishing("n-0", "4000", "16Gi"), fresh),
				explained(publishing("n-1", "2500", "8Gi"), fresh),
			},
			wantStatus:   StatusOK,
			wantFindings: []string{"every one of 2 node(s) with reclaimed capacity follows current usage (Fresh): 6.5 CPU and 24Gi memory of reclaimed capacity published in all"},
		},
		"a node the manager has not decided yet": {
			nodes:        []corev1.Node{explained(publishing("n-0", "4000", "16Gi"), fresh), node("new-0", "cpu", "16")},
			wantStatus:   StatusOK,
			wantFindings: []string{"every one of 1 node(s)", "1 node(s) have no explanation yet"},
		},
		"fresh, with nothing to reclaim": {
			nodes:        []corev1.Node{explained(node("n-0", "cpu", "16"), fresh)},
			wantStatus:   StatusOK,
			wantFindings: []string{"no reclaimed capacity published (online pods use what they request)"},
		},
		"a node frozen on stale usage": {
			nodes: []corev1.Node{
				explained(publishing("n-0", "4000", "16Gi"), fresh),
				explained(publishing("n-1", "2000", "8Gi"), stale(5*time.Minute, "frozen: no usage for the node")),
			},
			wantStatus: StatusWarn,
			wantFindings: []string{
				"1 of 2 node(s) with reclaimed capacity have it frozen on stale usage (n-1 for 5m; the first since 2026-11-29T11:55:00Z)",
				`n-1 says "frozen: no usage for the node"`, "does not grow",
			},
			wantFix: []string{"kubectl top nodes", "scrape the kubelet and the manager (see docs/install.md)", "reason=ReclaimFrozen", "backfill describe node n-1"},
		},
		"many frozen: the longest frozen first, a few named": {
			nodes: []corev1.Node{
				explained(node("a"), stale(2*time.Minute, "frozen: the newest usage is 4m0s old (stale after 3m0s)")),
				explained(node("b"), stale(10*time.Minute, "frozen: no usage for the node")),
				explained(node("c"), stale(3*time.Minute, "frozen: no usage for the node")),
				explained(node("d"), stale(4*time.Minute, "frozen: no usage for the node")),
				explained(node("e"), stale(5*time.Minute, "frozen: no usage for the node")),
			},
			wantStatus:   StatusWarn,
			wantFindings: []string{"5 of 5 node(s)", "(b for 10m, e for 5m, d for 4m and 2 more; the first since 2026-11-29T11:50:00Z): b says"},
			wantFix:      []string{"backfill describe node b"},
		},
		"an explanation doctor cannot read": {
			nodes:        []corev1.Node{annotated(node("n-0"), reclaim.ExplanationAnnotation, "{not json")},
			wantStatus:   StatusWarn,
			wantFindings: []string{"the annotation backfill.dev/reclaim of 1 node(s) is not an explanation doctor can read (n-0)"},
		},
		"no node explained: reclaim off or no manager yet": {
			nodes:        []corev1.Node{node("n-0", "cpu", "16")},
			wantStatus:   StatusSkip,
			wantFindings: []string{"no node has a reclaimed-capacity explanation", "--reclaim=false", "no manager with --reclaim has run yet"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := snapshot()
			s.Nodes = tc.nodes
			got := checkReclaimUsage(s)
			if got.Check != CheckReclaimUsage || got.Status != tc.wantStatus {
				t.Fatalf("got %s %s %q, want %s", got.Check, got.Status, got.Finding, tc.wantStatus)
			}
			wantTexts(t, got, tc.wantFindings, tc.wantFix)
		})
	}
}
