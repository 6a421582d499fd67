package reclaim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// missed is a signal of a workload at p99 against a 200ms objective.
func missed(p99 time.Duration) *OnlineSignal {
	return &OnlineSignal{Slack: float64(200*time.Millisecond-p99) / float64(200*time.Millisecond), SlackKnown: true,
		Workload: "shop/web", P99: p99, Objective: 200 * time.Millisecond}
}

// waiting is a signal of online pods that wait for a CPU and declare no
// objective.
func waiting(secondsPerSecond float64) *OnlineSignal {
	return &OnlineSignal{CPUWait: secondsPerSecond, WaitKnown: true}
}

// holding is a hold that began ago at milliCPU, harmed ever since.
func holding(since time.Duration, milliCPU int64) *OnlineHold {
	return &OnlineHold{Signal: SignalLatency, Why: "before", Since: ago(since), HarmSince: ago(since), MilliCPU: milliCPU}
}

// withHarm is h with its harm begun ago (0: none lasting now) and, with
// healthy above 0, healthy since that long ago.
func withHarm(h *OnlineHold, harm, healthy time.Duration) *OnlineHold {
	h.HarmSince, h.HealthySince = time.Time{}, time.Time{}
	if harm > 0 {
		h.HarmSince = ago(harm)
	}
	if healthy > 0 {
		h.HealthySince = ago(healthy)
	}
	return h
}

// missedWhy is what a hold says of missed(240ms).
const missedWhy = "workload shop/web has P99 240ms, above its objective 200ms"

func TestListen(t *testing.T) {
	s := settings()
	s.OnlineEvictAfter, s.OnlineRecoverAfter, s.OnlineStep = 2*time.Minute, 10*time.Minute, 10
	held := res(8000, 16)
	cases := map[string]struct {
		node     *Node // node16 unless set
		hold     *OnlineHold
		cooldown time.Time
		sig      *OnlineSignal
		held     Resources
		want     *OnlineHold
		grow     bool
		giveBack int64
	}{
		"healthy and never held: grows": {
			sig: missed(100 * time.Millisecond), held: held, grow: true,
		},
		"missing data changes nothing: no hold begins": {
			held: held, grow: true,
		},
		"missing data changes nothing: a hold stays, growth stays off": {
			hold: holding(time.Minute, 8000), held: held,
			want: holding(time.Minute, 8000),
		},
		"missing data neither ends a harm nor lets it step": {
			hold: holding(3*time.Minute, 8000), held: held,
			want: holding(3*time.Minute, 8000),
		},
		"a signal with neither measure is missing data": {
			hold: holding(time.Minute, 8000), sig: &OnlineSignal{}, held: held,
			want: holding(time.Minute, 8000),
		},
		"objective missed beside offline pods: a hold begins at what they hold, its harm now, no growth": {
			sig: missed(240 * time.Millisecond), held: held,
			want: &OnlineHold{Signal: SignalLatency, Why: missedWhy, Since: now, HarmSince: now, MilliCPU: 8000},
		},
		"online pods wait for CPU beside offline pods: a hold begins": {
			sig: waiting(0.3), held: held,
			want: &OnlineHold{Signal: SignalCPUWait, Why: "online pods wait 0.30 s per second for a CPU together (more than 0.1)", Since: now, HarmSince: now, MilliCPU: 8000},
		},
		"a wait under the threshold is healthy": {
			sig: waiting(0.05), held: held, grow: true,
		},
		"objective missed without offline pods: not theirs to fix, but no growth": {
			sig: missed(240 * time.Millisecond), held: Resources{},
		},
		"within 10% of the objective: no growth, no hold": {
			sig: missed(190 * time.Millisecond), held: held,
		},
		"harm shorter than evict-after: the hold stays, nothing given back": {
			hold: holding(time.Minute, 8000), sig: missed(240 * time.Millisecond), held: held,
			want: &OnlineHold{Signal: SignalLatency, Why: missedWhy, Since: ago(time.Minute), HarmSince: ago(time.Minute), MilliCPU: 8000},
		},
		"harm that lasts gives back a step of the node's CPU": {
			hold: holding(3*time.Minute, 8000), sig: missed(240 * time.Millisecond), held: held,
			want:     &OnlineHold{Signal: SignalLatency, Why: missedWhy, Since: ago(3 * time.Minute), HarmSince: ago(3 * time.Minute), MilliCPU: 6400, Steps: 1},
			giveBack: 1600,
		},
		"harm that lasted evict-after exactly gives back a step": {
			hold: holding(2*time.Minute, 8000), sig: waiting(0.3), held: held,
			want: &OnlineHold{Signal: SignalCPUWait, Why: "online pods wait 0.30 s per second for a CPU together (more than 0.1)",
				Since: ago(2 * time.Minute), HarmSince: ago(2 * time.Minute), MilliCPU: 6400, Steps: 1},
			giveBack: 1600,
		},
		"no step while the cool-down of the last one runs": {
			hold: holding(3*time.Minute, 6400), cooldown: now.Add(time.Minute), sig: missed(240 * time.Millisecond), held: res(6400, 16),
			want: &OnlineHold{Signal: SignalLatency, Why: missedWhy, Since: ago(3 * time.Minute), HarmSince: ago(3 * time.Minute), MilliCPU: 6400},
		},
		"a step once the cool-down ended, the harm going on": {
			hold: holding(10*time.Minute, 6400), cooldown: now, sig: missed(240 * time.Millisecond), held: res(6400, 16),
			want:     &OnlineHold{Signal: SignalLatency, Why: missedWhy, Since: ago(10 * time.Minute), HarmSince: ago(10 * time.Minute), MilliCPU: 4800, Steps: 1},
			giveBack: 1600,
		},
		"a step below what is left goes from what offline pods hold now": {
			hold: holding(10*time.Minute, 6400), sig: missed(240 * time.Millisecond), held: res(1000, 16),
			want:     &OnlineHold{Signal: SignalLatency, Why: missedWhy, Since: ago(10 * time.Minute), HarmSince: ago(10 * time.Minute), MilliCPU: 0, Steps: 1},
			giveBack: 1000,
		},
		"a step that would give back nothing is not taken: a node too small for a millicore of step": {
			node: &Node{Name: "tiny", Capacity: res(9, 1), Allocatable: res(9, 1)},
			hold: holding(10*time.Minute, 5), sig: missed(240 * time.Millisecond), held: res(5, 1),
			want: &OnlineHold{Signal: SignalLatency, Why: missedWhy, Since: ago(10 * time.Minute), HarmSince: ago(10 * time.Minute), MilliCPU: 5},
		},
		"harm after a healthy spell starts over: one harmful reading 9 minutes into a recovery evicts nothing": {
			hold: withHarm(holding(20*time.Minute, 6400), 0, 9*time.Minute), sig: missed(240 * time.Millisecond), held: held,
			want: &OnlineHold{Signal: SignalLatency, Why: missedWhy, Since: ago(20 * time.Minute), HarmSince: now, MilliCPU: 6400},
		},
		"harm after a spell within 10% of the objective starts over": {
			hold: withHarm(holding(20*time.Minute, 6400), 0, 0), sig: missed(240 * time.Millisecond), held: held,
			want: &OnlineHold{Signal: SignalLatency, Why: missedWhy, Since: ago(20 * time.Minute), HarmSince: now, MilliCPU: 6400},
		},
		"within 10% of the objective ends the harm: no growth, no step": {
			hold: holding(3*time.Minute, 8000), sig: missed(190 * time.Millisecond), held: held,
			want: withHarm(holding(3*time.Minute, 8000), 0, 0),
		},
		"within 10% of the objective is not healthy either: the healthy clock stops": {
			hold: withHarm(holding(20*time.Minute, 6400), 0, 9*time.Minute), sig: missed(195 * time.Millisecond), held: held,
			want: withHarm(holding(20*time.Minute, 6400), 0, 0),
		},
		"harm without offline pods: the hold stays, its harm going on": {
			hold: holding(time.Minute, 8000), sig: missed(240 * time.Millisecond), held: Resources{},
			want: holding(time.Minute, 8000),
		},
		"a hold kept without its harm's start (an older manager's): the harm starts at this reading": {
			hold: withHarm(holding(10*time.Minute, 8000), 0, 0), sig: missed(240 * time.Millisecond), held: held,
			want: &OnlineHold{Signal: SignalLatency, Why: missedWhy, Since: ago(10 * time.Minute), HarmSince: now, MilliCPU: 8000},
		},
		"healthy again: the harm ends, the hold stays until healthy for recover-after": {
			hold: holding(5*time.Minute, 6400), sig: missed(100 * time.Millisecond), held: held,
			want: func() *OnlineHold { h := withHarm(holding(5*time.Minute, 6400), 0, 0); h.HealthySince = now; return h }(),
		},
		"healthy for recover-after: the hold ends and the node grows": {
			hold: withHarm(holding(20*time.Minute, 6400), 0, 10*time.Minute),
			sig:  missed(100 * time.Millisecond), held: held, grow: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := node16(res(9000, 20))
			if tc.node != nil {
				n = *tc.node
			}
			n.Online, n.CooldownUntil = tc.hold, tc.cooldown
			hold, grow, giveBack := listen(n, tc.sig, s, tc.held, now)
			if diff := cmp.Diff(tc.want, hold); diff != "" {
				t.Errorf("hold (-want +got):\n%s", diff)
			}
			if grow != tc.grow || giveBack != tc.giveBack {
				t.Errorf("grow, giveBack = %v, %d; want %v, %d", grow, giveBack, tc.grow, tc.giveBack)
			}
		})
	}
}

// A held node's decision: capacity capped at the hold, victims chosen for
// the step, the explanation saying so; and growth once released.
func TestDecideListensToOnlinePods(t *testing.T) {
	s := settings()
	pods := []Pod{single("old", res(4000, 8), 3*time.Hour), single("new", res(4000, 8), 10*time.Minute)}
	lasting := func(n Node) Node { n.Online = holding(3*time.Minute, 8000); return n }

	u := usage(3000, 8)
	u.Online = missed(240 * time.Millisecond)
	d := Decide(lasting(changedAgo(time.Hour, res(9000, 20), pods...)), u, s, now)
	if got := names(d.Evict); !cmp.Equal(got, []string{"new"}) {
		t.Errorf("victims = %v, want the pod that loses least: [new]", got)
	}
	if d.Online == nil || d.Online.Steps != 1 || d.Online.MilliCPU != 6400 {
		t.Errorf("hold = %+v, want one step down to 6400m", d.Online)
	}
	if d.Published.MilliCPU != 4000 {
		t.Errorf("published cpu = %d, want what the pod left holds, 4000", d.Published.MilliCPU)
	}
	if !d.CooldownUntil.Equal(now.Add(s.Cooldown)) {
		t.Errorf("cool-down until %v, want %v: a step starts one", d.CooldownUntil, now.Add(s.Cooldown))
	}

	// Capacity is free to grow to 10900m, but a new hold keeps it at what
	// offline pods hold.
	u = usage(3000, 8)
	u.Online = missed(240 * time.Millisecond)
	d = Decide(changedAgo(time.Hour, res(9000, 20), pods...), u, s, now)
	if d.Published.MilliCPU != 8000 || len(d.Evict) != 0 {
		t.Errorf("published cpu = %d with %d victims, want 8000 and none", d.Published.MilliCPU, len(d.Evict))
	}
	if d.Online == nil || !d.Online.Since.Equal(now) {
		t.Errorf("hold = %+v, want one beginning now", d.Online)
	}

	// Released: it grows by at most a minute's growth, 1600m.
	released := changedAgo(time.Hour, res(8000, 20), pods...)
	released.Online = &OnlineHold{Signal: SignalLatency, Since: ago(time.Hour), HealthySince: ago(11 * time.Minute), MilliCPU: 8000}
	u = usage(3000, 8)
	u.Online = missed(100 * time.Millisecond)
	d = Decide(released, u, s, now)
	if d.Online != nil || d.Published.MilliCPU != 9600 {
		t.Errorf("hold %+v, published cpu %d; want none and 9600", d.Online, d.Published.MilliCPU)
	}
}

// Each step of the online signal starts a cool-down, and none runs
// before the last one's ends: a node steps at most once per cool-down.
func TestDecideOnlineStepsCoolDown(t *testing.T) {
	s := settings()
	pods := []Pod{single("old", res(4000, 8), 3*time.Hour), single("new", res(4000, 8), 10*time.Minute)}
	cases := map[string]struct {
		hold         *OnlineHold
		cooldown     time.Time
		sig          *OnlineSignal
		wantEvict    []string
		wantCooldown time.Time
		wantSteps    int
	}{
		"a step evicts and starts a cool-down": {
			hold: holding(3*time.Minute, 8000), sig: missed(240 * time.Millisecond),
			wantEvict: []string{"new"}, wantCooldown: now.Add(s.Cooldown), wantSteps: 1,
		},
		"during the cool-down the harm goes on without a step": {
			hold: holding(3*time.Minute, 8000), cooldown: now.Add(time.Minute), sig: missed(240 * time.Millisecond),
			wantCooldown: now.Add(time.Minute),
		},
		"harm shorter than evict-after: no step, no cool-down": {
			hold: holding(time.Minute, 8000), sig: missed(240 * time.Millisecond),
		},
		"harm again after a healthy spell: no step, no cool-down": {
			hold: withHarm(holding(20*time.Minute, 8000), 0, 9*time.Minute), sig: missed(240 * time.Millisecond),
		},
		"within 10% of the objective after lasting harm: no step": {
			hold: holding(20*time.Minute, 8000), sig: missed(190 * time.Millisecond),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := changedAgo(time.Hour, res(8000, 20), pods...)
			n.Online, n.CooldownUntil = tc.hold, tc.cooldown
			u := usage(3000, 8)
			u.Online = tc.sig
			d := Decide(n, u, s, now)
			if diff := cmp.Diff(tc.wantEvict, names(d.Evict)); diff != "" {
				t.Errorf("victims (-want +got):\n%s", diff)
			}
			if !d.CooldownUntil.Equal(tc.wantCooldown) {
				t.Errorf("cool-down until %v, want %v", d.CooldownUntil, tc.wantCooldown)
			}
			if d.Online == nil || d.Online.Steps != tc.wantSteps {
				t.Errorf("hold %+v, want %d step(s)", d.Online, tc.wantSteps)
			}
		})
	}
}
