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

// holding is a hold that began ago at milliCPU.
func holding(since time.Duration, milliCPU int64) *OnlineHold {
	return &OnlineHold{Signal: SignalLatency, Why: "before", Since: ago(since), MilliCPU: milliCPU}
}

func TestListen(t *testing.T) {
	s := settings()
	s.OnlineEvictAfter, s.OnlineRecoverAfter, s.OnlineStep = 2*time.Minute, 10*time.Minute, 10
	held := res(8000, 16)
	cases := map[string]struct {
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
		"a signal with neither measure is missing data": {
			hold: holding(time.Minute, 8000), sig: &OnlineSignal{}, held: held,
			want: holding(time.Minute, 8000),
		},
		"objective missed beside offline pods: a hold begins at what they hold, no growth": {
			sig: missed(240 * time.Millisecond), held: held,
			want: &OnlineHold{Signal: SignalLatency, Why: "workload shop/web has P99 240ms, above its objective 200ms", Since: now, MilliCPU: 8000},
		},
		"online pods wait for CPU beside offline pods: a hold begins": {
			sig: waiting(0.3), held: held,
			want: &OnlineHold{Signal: SignalCPUWait, Why: "online pods wait 0.30 s per second for a CPU together (more than 0.1)", Since: now, MilliCPU: 8000},
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
			want: &OnlineHold{Signal: SignalLatency, Why: "workload shop/web has P99 240ms, above its objective 200ms", Since: ago(time.Minute), MilliCPU: 8000},
		},
		"harm that lasts gives back a step of the node's CPU": {
			hold: holding(3*time.Minute, 8000), sig: missed(240 * time.Millisecond), held: held,
			want:     &OnlineHold{Signal: SignalLatency, Why: "workload shop/web has P99 240ms, above its objective 200ms", Since: ago(3 * time.Minute), MilliCPU: 6400, Steps: 1},
			giveBack: 1600,
		},
		"no step while the cool-down of the last one runs": {
			hold: holding(3*time.Minute, 6400), cooldown: now.Add(time.Minute), sig: missed(240 * time.Millisecond), held: res(6400, 16),
			want: &OnlineHold{Signal: SignalLatency, Why: "workload shop/web has P99 240ms, above its objective 200ms", Since: ago(3 * time.Minute), MilliCPU: 6400},
		},
		"a step below what is left goes from what offline pods hold now": {
			hold: holding(10*time.Minute, 6400), sig: missed(240 * time.Millisecond), held: res(1000, 16),
			want:     &OnlineHold{Signal: SignalLatency, Why: "workload shop/web has P99 240ms, above its objective 200ms", Since: ago(10 * time.Minute), MilliCPU: 0, Steps: 1},
			giveBack: 1000,
		},
		"healthy again: the hold stays until healthy for recover-after": {
			hold: holding(5*time.Minute, 6400), sig: missed(100 * time.Millisecond), held: held,
			want: func() *OnlineHold { h := holding(5*time.Minute, 6400); h.HealthySince = now; return h }(),
		},
		"healthy for recover-after: the hold ends and the node grows": {
			hold: func() *OnlineHold {
				h := holding(20*time.Minute, 6400)
				h.HealthySince = ago(10 * time.Minute)
				return h
			}(),
			sig: missed(100 * time.Millisecond), held: held, grow: true,
		},
		"flapping: harm again restarts the healthy clock": {
			hold: func() *OnlineHold {
				h := holding(20*time.Minute, 6400)
				h.HealthySince = ago(9 * time.Minute)
				return h
			}(),
			cooldown: now.Add(time.Minute), sig: missed(240 * time.Millisecond), held: held,
			want: &OnlineHold{Signal: SignalLatency, Why: "workload shop/web has P99 240ms, above its objective 200ms", Since: ago(20 * time.Minute), MilliCPU: 6400},
		},
		"flapping: within 10% of the objective is not healthy either": {
			hold: func() *OnlineHold {
				h := holding(20*time.Minute, 6400)
				h.HealthySince = ago(9 * time.Minute)
				return h
			}(),
			sig: missed(195 * time.Millisecond), held: held,
			want: holding(20*time.Minute, 6400),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n := node16(res(9000, 20))
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
