package nodeagent

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/nodeagent/nodefs"
)

// trainPod is a reclaimed best-effort pod; webPod an online pod limited to
// 1.5 cores, as the kubelet writes it.
var (
	trainPod = Pod{Namespace: "ml", Name: "train-worker-0", UID: "0a1b2c3d-0000-4000-8000-000000000001", QOS: corev1.PodQOSBestEffort,
		Reclaimed: true, Limits: nodefs.Limits{Pod: -1, Containers: map[string]int64{"c-train": -1}}, Weight: 1000}
	webPod = Pod{Namespace: "web", Name: "web-0", UID: "0a1b2c3d-0000-4000-8000-000000000002", QOS: corev1.PodQOSBurstable,
		Limits: nodefs.Limits{Pod: 150000, Containers: map[string]int64{"c-web": 150000}}, Weight: 1500}
)

// newTestAgent is an agent on n, ticked by the test, with the default
// settings changed by change.
func newTestAgent(t *testing.T, n *fakeTree, pods PodSource, change func(*Settings)) *Agent {
	t.Helper()
	s := DefaultSettings()
	s.Interval = 100 * time.Millisecond
	if change != nil {
		change(&s)
	}
	a, err := New(Config{FS: n.fs, Pods: pods, Settings: s, Log: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func tick(t *testing.T, a *Agent) {
	t.Helper()
	if err := a.Tick(context.Background()); err != nil {
		t.Fatalf("Tick: %v", err)
	}
}

// wantStates checks the pods' cgroups.
func wantStates(t *testing.T, n *fakeTree, when string, want map[*Pod]podState) {
	t.Helper()
	for p, w := range want {
		if diff := cmp.Diff(w, n.state(t, p.group(n.fs))); diff != "" {
			t.Errorf("%s, pod %s (-want +got):\n%s", when, p.Name, diff)
		}
	}
}

// A new agent on a light node lifts what an agent before it left, on the
// pods it lists rather than on those it remembers: the ceiling and idle
// class on an online pod at once, the reclaimed pod's ceiling once it has
// measured the node light. The idle class of reclaimed pods follows
// --cpu-idle, not the ceiling.
func TestRestartLiftsWhatItFinds(t *testing.T) {
	for name, idle := range map[string]bool{"cpu-idle on": true, "cpu-idle off": false} {
		t.Run(name, func(t *testing.T) {
			n := newFakeTree(t)
			n.addPod(t, trainPod, 20000)
			n.setIdle(t, trainPod.group(n.fs), true)
			n.addPod(t, webPod, 10000)
			n.setIdle(t, webPod.group(n.fs), true)
			a := newTestAgent(t, n, &podList{pods: []Pod{trainPod, webPod}}, func(s *Settings) { s.CPUIdle = idle })

			tick(t, a)
			wantStates(t, n, "after the first tick", map[*Pod]podState{
				&trainPod: {Quota: 20000, Idle: idle}, // not measured yet: the quota waits
				&webPod:   {Quota: 150000},
			})
			tick(t, a)
			wantStates(t, n, "after the second tick", map[*Pod]podState{
				&trainPod: {Quota: -1, Idle: idle},
				&webPod:   {Quota: 150000},
			})
			if last := a.Last(); last.Engaged || last.Ceiling != -1 {
				t.Errorf("Last() = %+v, want no ceiling on a light node", last)
			}
		})
	}
}

// A pod that stops being reclaimed is released, though the agent capped
// it itself.
func TestPodNoLongerReclaimedIsReleased(t *testing.T) {
	n := newFakeTree(t)
	n.addPod(t, trainPod, -1)
	pods := &podList{pods: []Pod{trainPod}}
	a := newTestAgent(t, n, pods, func(s *Settings) { s.CPUActivation, s.CPUActivationBand = 0, 0 })
	tick(t, a)
	tick(t, a)
	wantStates(t, n, "reclaimed", map[*Pod]podState{&trainPod: {Quota: 170000, Idle: true}})

	online := trainPod
	online.Reclaimed = false
	pods.set(online)
	tick(t, a)
	wantStates(t, n, "no longer reclaimed", map[*Pod]podState{&trainPod: {Quota: -1}})
}

// Run lifts the ceiling and idle class of every reclaimed pod as it ends.
func TestRunLiftsOnExit(t *testing.T) {
	n := newFakeTree(t)
	n.addPod(t, trainPod, -1)
	n.addPod(t, webPod, 150000)
	a := newTestAgent(t, n, &podList{pods: []Pod{trainPod, webPod}}, func(s *Settings) { s.CPUActivation, s.CPUActivationBand = 0, 0 })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	waitFor(t, "the agent to cap the reclaimed pod", func() bool { return n.state(t, trainPod.group(n.fs)) == podState{Quota: 170000, Idle: true} })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	wantStates(t, n, "after Run returned", map[*Pod]podState{&trainPod: {Quota: -1}, &webPod: {Quota: 150000}})
}

// A reclaimed pod whose resources are being resized leaves the idle class
// until the resize has settled, and its ceiling while the kubelet applies
// it; an online pod being resized keeps the quota the kubelet gave it,
// even below its spec's.
func TestResizingPods(t *testing.T) {
	n := newFakeTree(t)
	n.addPod(t, trainPod, -1)
	n.addPod(t, webPod, 100000)
	pods := &podList{}
	train, web := trainPod, webPod
	web.Resize = ResizeApplying
	pods.set(train, web)
	a := newTestAgent(t, n, pods, func(s *Settings) { s.CPUActivation, s.CPUActivationBand = 0, 0 })
	tick(t, a)
	tick(t, a)
	wantStates(t, n, "no resize", map[*Pod]podState{&trainPod: {Quota: 170000, Idle: true}, &webPod: {Quota: 100000}})

	steps := []struct {
		resize Resize
		want   podState
	}{
		{ResizeAsked, podState{Quota: 170000}},
		{ResizeApplying, podState{Quota: -1}},
		{ResizeNone, podState{Quota: 170000, Idle: true}},
	}
	for _, st := range steps {
		train.Resize = st.resize
		pods.set(train, web)
		tick(t, a)
		if got := n.state(t, train.group(n.fs)); got != st.want {
			t.Errorf("resize %d: the reclaimed pod's cgroup %+v, want %+v", st.resize, got, st.want)
		}
	}
	wantStates(t, n, "the online pod resizing throughout", map[*Pod]podState{&webPod: {Quota: 100000}})
}

// waitFor polls cond every 10 ms until it holds, failing the test after
// 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	ticker := time.NewTicker(10 * time.Millisecond)
	defer ticker.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-ticker.C
	}
}
