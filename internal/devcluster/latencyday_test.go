package devcluster

import (
	"io/fs"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/backfill-dev/backfill/examples"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/devcluster/latencysim"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// TestOnlineWebObjectiveAgainstTheDay checks the latency objective of
// examples/online-web.yaml against the demo's day and the simulated
// latency, on a CPU node of the default size that its pods request whole:
// the service meets the objective alone all day and beside training by
// night, and misses it at the afternoon peak when training fills the
// node's reclaimed capacity, or holds even one backlog worker that the
// usage margins leave running, so that the manager's latency hold shows.
func TestOnlineWebObjectiveAgainstTheDay(t *testing.T) {
	web := onlineWeb(t)
	objective, err := colocation.LatencyObjectiveOf(web.Spec.Template.Annotations)
	if err != nil || objective == nil {
		t.Fatalf("examples/online-web.yaml does not opt in to latency protection: %v", err)
	}
	opts := DefaultOptions()
	nodeCPU := resource.MustParse(opts.NodeCPU)
	capacity := float64(nodeCPU.MilliValue()) / 1000
	c := web.Spec.Template.Spec.Containers[0].Resources
	request, limit := float64(c.Requests.Cpu().MilliValue())/1000, float64(c.Limits.Cpu().MilliValue())/1000
	podsPerNode := float64(*web.Spec.Replicas) / float64(opts.CPUNodes)
	filled := capacity * float64(100-reclaim.DefaultSettings().Margin.CPU) / 100
	smallestWorker := capacity
	for _, s := range backlogShapes {
		q := resource.MustParse(s.cpu)
		smallestWorker = min(smallestWorker, float64(q.MilliValue())/1000)
	}

	p99 := func(hour float64, offline func(online float64) float64) time.Duration {
		use := request * onlineShare(hour)
		online := use * podsPerNode
		return latencysim.P99(latencysim.Load{
			Use: use, Request: request, Limit: limit,
			NodeCapacity: capacity, NodeUse: online + offline(online), NodeRequests: request * podsPerNode,
		})
	}
	alone := func(float64) float64 { return 0 }
	fillToMargin := func(online float64) float64 { return max(filled-online, 0) }
	oneWorker := func(float64) float64 { return smallestWorker }

	healthy := time.Duration(float64(objective.P99) * 0.9) // the manager's tight slack
	for hour := 0.0; hour < 24; hour += 0.25 {
		if got := p99(hour, alone); got > healthy {
			t.Errorf("at %05.2fh alone the P99 is %v, want at most %v: the objective must be met without training", hour, got, healthy)
		}
	}
	for _, hour := range []float64{0, 3, 6, 10, 19, 22} {
		if got := p99(hour, fillToMargin); got > healthy {
			t.Errorf("at %02.0f:00 beside training filling to the margin the P99 is %v, want at most %v", hour, got, healthy)
		}
	}
	for what, offline := range map[string]func(float64) float64{"training filling to the margin": fillToMargin, "one backlog worker": oneWorker} {
		if got := p99(15, offline); got <= objective.P99 {
			t.Errorf("at the 15:00 peak beside %s the P99 is %v, want above the objective %v", what, got, objective.P99)
		}
	}
	// The usage margins leave the one worker running at the peak: it
	// leaves online pods more than the eviction margin free.
	peakOnline := request * onlineShare(15) * podsPerNode
	if free, floor := capacity-peakOnline-smallestWorker, capacity*float64(reclaim.DefaultSettings().EvictionMargin.CPU)/100; free < floor {
		t.Errorf("at the peak one %v-CPU worker leaves %.2f CPUs free, under the eviction margin %.2f: the usage margins alone evict it", smallestWorker, free, floor)
	}
}

// onlineWeb is the Deployment of examples/online-web.yaml.
func onlineWeb(t *testing.T) *appsv1.Deployment {
	t.Helper()
	data, err := fs.ReadFile(examples.FS, "online-web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(data, &d); err != nil {
		t.Fatalf("examples/online-web.yaml: %v", err)
	}
	if d.Spec.Replicas == nil || len(d.Spec.Template.Spec.Containers) == 0 || d.Spec.Template.Spec.Containers[0].Resources.Requests.Cpu().IsZero() {
		t.Fatalf("examples/online-web.yaml: want replicas and a container requesting CPU")
	}
	return &d
}
