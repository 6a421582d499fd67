package main

import (
	"testing"
	"time"

	"github.com/backfill-dev/backfill/internal/reclaim"
)

// flat is one node's online demand held at cpu cores and memory GiB.
func flat(cpu, memory float64, minutes int) *traces {
	tr := &traces{minutes: minutes, requests: []resources{{cpu: 22, memory: 88}}, cpu: [][]float64{make([]float64, minutes)}, memory: [][]float64{make([]float64, minutes)}}
	for m := range minutes {
		tr.cpu[0][m], tr.memory[0][m] = cpu, memory
	}
	return tr
}

// perfect is a usage source without delay or averaging.
func perfect(tr *traces) *usageSource { return newUsageSource(tr, 0, 1) }

// recorder is an evictor that remembers what it was asked and refuses
// evictions when told to.
type recorder struct {
	evicted, killed []*replica
	noticed         []bool
	refuse          bool
}

func (r *recorder) evict(x *replica, noticed bool) bool {
	r.evicted, r.noticed = append(r.evicted, x), append(r.noticed, noticed)
	return !r.refuse
}

func (r *recorder) kill(x *replica) { r.killed = append(r.killed, x) }

func TestKoordinatorBatchIsTheUsagePolicy(t *testing.T) {
	spec := defaultNodeSpec()
	tr := flat(8, 30, 10)
	k := newKoordinator(spec, tr, perfect(tr), koordDefaults)
	// 32 - 32 x 40% - max(0.4, 0.5) - 8; 128 - 128 x 35% - max(0.9, 1) - 30.
	want := resources{cpu: 32 - 12.8 - 0.5 - 8, memory: 128 - 44.8 - 1 - 30}.exact()
	if got := k.batch(0, 9); got != want {
		t.Errorf("batch = %v, want %v", got, want)
	}
}

func TestKoordinatorRewritesOnA10PercentChangeOrEvery5Minutes(t *testing.T) {
	spec := defaultNodeSpec()
	tr := flat(8, 30, 20)
	k := newKoordinator(spec, tr, perfect(tr), koordDefaults)
	n := &node{}
	k.control(n, 0, nil)
	first := n.published
	for m := 1; m < 20; m++ {
		tr.cpu[0][m] = 8.5 // batch falls by 0.5 CPU: less than 10%
	}
	k.control(n, 1, nil)
	if n.published != first {
		t.Errorf("a change of less than 10%% was written at once")
	}
	for m := 2; m <= 4; m++ {
		k.control(n, m, nil)
	}
	if n.published != first {
		t.Errorf("rewritten before 5 minutes passed")
	}
	k.control(n, 5, nil)
	if n.published == first {
		t.Errorf("not rewritten after 5 minutes")
	}
}

func TestKoordinatorEvictsTheLargestMemoryUsersAt70Percent(t *testing.T) {
	spec := defaultNodeSpec()
	// 60 + 0.9 system + offline 30 = 90.9 GiB = 71% of 128: release down
	// to 68% (87.04 GiB), 3.86 GiB.
	tr := flat(8, 60, 1)
	k := newKoordinator(spec, tr, perfect(tr), koordDefaults)
	n := &node{}
	for _, use := range []float64{2, 12, 5, 11} {
		r := &replica{job: &job{}, name: string(rune('a' + len(n.replicas))), memoryUse: use}
		n.replicas = append(n.replicas, r)
	}
	victims := k.memoryVictims(n, 0)
	if len(victims) != 1 || victims[0].memoryUse != 12 {
		t.Errorf("victims %v, want only the replica using 12 GiB", victims)
	}
	k.traces.memory[0][0] = 40 // 55%: no pressure
	if v := k.memoryVictims(n, 0); len(v) != 0 {
		t.Errorf("evicted %d replicas below 70%%", len(v))
	}
}

func TestKoordinatorSuppressesOfflineCPU(t *testing.T) {
	tr := flat(8, 30, 1)
	k := newKoordinator(defaultNodeSpec(), tr, perfect(tr), koordDefaults)
	// 32 x 65% - 8 - max(0.4, 0.5)
	if got, want := k.cpuCap(&node{}, 0), 20.8-8-0.5; got != want {
		t.Errorf("cap = %.2f, want %.2f", got, want)
	}
	k.traces.cpu[0][0] = 20
	if got := k.cpuCap(&node{}, 0); got != koordSuppressMinCPU {
		t.Errorf("cap under heavy online use = %.2f, want the floor of 2 cores", got)
	}
}

func TestBackfillFeedsDecideThePeakAndTheCheckpoint(t *testing.T) {
	spec := defaultNodeSpec()
	tr := flat(8, 30, 60)
	tr.cpu[0][40] = 12 // a burst 10 minutes ago, within the 15-minute window
	b := newBackfill(spec, tr, perfect(tr), benchSettings(), nil)
	c := newCluster(spec, 1)
	j := gangOn(c, resources{cpu: 2, memory: 8}, 1e6, 0)
	for m := range 45 {
		j.progress(m, 1)
	}
	n := c.nodes[0]
	pods := b.node(n).Pods
	if len(pods) != 1 || !pods[0].Job.Since.Equal(clock(40)) || pods[0].Job.Replicas != 1 {
		t.Fatalf("pods %+v: want one, its job at risk since its checkpoint at minute 40", pods)
	}
	u := b.usage(n, 50)
	if want := (resources{cpu: 12, memory: 30}).exact(); u.OnlinePeak != want || u.Partial {
		t.Errorf("usage peak %v (partial %v), want %v over a full window", u.OnlinePeak, u.Partial, want)
	}
	if u := b.usage(n, 5); !u.Partial {
		t.Error("a history of 6 minutes covers a 15-minute window")
	}
}

func TestBackfillEvictsWhatDecideChooses(t *testing.T) {
	spec := defaultNodeSpec()
	tr := flat(8, 30, 30)
	b := newBackfill(spec, tr, perfect(tr), benchSettings(), nil)
	c := newCluster(spec, 1)
	n := c.nodes[0]
	big := gangOn(c, resources{cpu: 20, memory: 8}, 1e6, 0)
	n.published = n.held
	for m := 5; m < 30; m++ {
		tr.cpu[0][m] = 16 // online doubles for longer than the CPU eviction delay: the target falls below what is held
	}
	ev := &recorder{}
	b.control(n, 20, ev)
	if len(ev.evicted) != 1 || ev.evicted[0].job != big || !ev.noticed[0] {
		t.Fatalf("evicted %v (noticed %v), want the one replica, with notice: online pods are short of CPU only", ev.evicted, ev.noticed)
	}
	if !n.cooldownUntil.Equal(clock(21).Add(5 * time.Minute)) {
		t.Errorf("cool-down until %v, want 5 minutes after the decision", n.cooldownUntil)
	}
	if n.published != (reclaim.Resources{}) {
		t.Errorf("published %v while evicting everything, want nothing", n.published)
	}
}
