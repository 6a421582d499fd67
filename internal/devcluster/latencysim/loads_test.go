package latencysim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/backfill-dev/backfill/internal/colocation"
)

func TestLoads(t *testing.T) {
	nodes := []corev1.Node{cpuNode("cpu-0", "16"), cpuNode("cpu-1", "8")}
	pods := []corev1.Pod{
		makePod("shop", "web-b", "cpu-0").container("2", "4").uses("1500m").objective("200ms").obj(),
		makePod("shop", "web-a", "cpu-0").container("2", "4").uses("1").objective("200ms").obj(),
		// Not opted in: its use and request count for the node only.
		makePod("shop", "cart", "cpu-0").container("4", "").uses("3").obj(),
		// Offline, on reclaimed capacity: no cpu request, its use counts.
		makePod("ml", "train-worker-0", "cpu-0").container("", "").uses("4").obj(),
		// Two containers, each using the annotation's CPU; a limit on one
		// only is no pod limit.
		makePod("shop", "api", "cpu-1").container("1", "2").container("1", "").uses("500m").objective("150ms").
			annotate(colocation.LatencyMetricAnnotation, "api_request_seconds").obj(),
		// Not running, or not anywhere: nothing.
		makePod("shop", "web-pending", "").container("2", "4").objective("200ms").phase(corev1.PodPending).obj(),
		makePod("shop", "web-done", "cpu-1").container("2", "4").uses("2").objective("200ms").phase(corev1.PodSucceeded).obj(),
		// A malformed opt-in: left to the manager to report.
		makePod("shop", "web-bad", "cpu-1").container("2", "4").uses("1").objective("fast").obj(),
	}
	cpu0 := Load{NodeCapacity: 16, NodeUse: 1.5 + 1 + 3 + 4, NodeRequests: 2 + 2 + 4}
	cpu1 := Load{NodeCapacity: 8, NodeUse: 0.5*2 + 1, NodeRequests: 2 + 2}
	with := func(node Load, use, request, limit float64) Load {
		node.Use, node.Request, node.Limit = use, request, limit
		return node
	}
	want := []PodLoad{
		{Namespace: "shop", Pod: "api", UID: types.UID("api-uid"), Node: "cpu-1", Metric: "api_request_seconds", Load: with(cpu1, 1, 2, 0)},
		{Namespace: "shop", Pod: "web-a", UID: types.UID("web-a-uid"), Node: "cpu-0", Metric: "http_server_request_duration_seconds", Load: with(cpu0, 1, 2, 4)},
		{Namespace: "shop", Pod: "web-b", UID: types.UID("web-b-uid"), Node: "cpu-0", Metric: "http_server_request_duration_seconds", Load: with(cpu0, 1.5, 2, 4)},
	}
	if diff := cmp.Diff(want, Loads(nodes, pods)); diff != "" {
		t.Errorf("Loads (-want +got):\n%s", diff)
	}
}

func TestLoadsWithoutUsage(t *testing.T) {
	pods := []corev1.Pod{makePod("shop", "web", "cpu-0").container("2", "4").objective("200ms").obj()}
	got := Loads([]corev1.Node{cpuNode("cpu-0", "16")}, pods)
	if len(got) != 1 || got[0].Load.Use != 0 || RequestRate(got[0].Load) != 0 {
		t.Errorf("Loads of a pod without usage: %+v, want one pod that serves no request", got)
	}
}
