package reclaim

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// settings are the defaults but for round numbers: margins of 10% CPU and
// 20% memory, growth of 10% of capacity a minute, 2% minimum change.
func settings() Settings {
	s := DefaultSettings()
	s.Margin = Percents{CPU: 10, Memory: 20}
	s.GrowthPerMinute, s.MinChange = 10, 2
	s.Cooldown, s.StaleAfter = 5*time.Minute, 3*time.Minute
	return s
}

// node16 is a node of 16 CPU and 64 GiB, of which the kubelet reserves
// 500m and 1 GiB, publishing published.
func node16(published Resources, pods ...Pod) Node {
	return Node{Name: "n", Capacity: res(16000, 64), Allocatable: Resources{MilliCPU: 15500, Memory: 63 << 30}, Published: published, Pods: pods}
}

// usage is online use that peaked at, and has lasted at, the amounts.
func usage(onlineMilliCPU, onlineGiB int64) *Usage {
	return &Usage{OnlinePeak: res(onlineMilliCPU, onlineGiB), OnlineLasting: res(onlineMilliCPU, onlineGiB), At: ago(10 * time.Second)}
}

// burst is online use that peaked at peak CPU but has lasted only at base.
func burst(baseMilliCPU, peakMilliCPU, onlineGiB int64) *Usage {
	u := usage(peakMilliCPU, onlineGiB)
	u.OnlineLasting.MilliCPU = baseMilliCPU
	return u
}

// changedAgo is node16 whose published capacity last changed d ago.
func changedAgo(d time.Duration, published Resources, pods ...Pod) Node {
	n := node16(published, pods...)
	n.PublishedAt = ago(d)
	return n
}

func TestTarget(t *testing.T) {
	cases := map[string]struct {
		node  Node
		usage *Usage
		want  Resources
	}{
		// 16000 - 1600 margin - 500 reserved - 3000 online = 10900;
		// 64Gi - 12.8Gi - 1Gi - 8Gi.
		"online requests far more than it uses": {
			node: node16(Resources{}), usage: usage(3000, 8),
			want: Resources{MilliCPU: 10900, Memory: wholeMiB(64<<30 - (64<<30)/5 - 1<<30 - 8<<30)},
		},
		"measured system use above the reservation counts instead": {
			node: node16(Resources{}),
			usage: func() *Usage {
				u := usage(3000, 8)
				u.System, u.SystemKnown = res(1500, 4), true
				return u
			}(),
			want: Resources{MilliCPU: 9900, Memory: wholeMiB(64<<30 - (64<<30)/5 - 4<<30 - 8<<30)},
		},
		"offline pods on requested capacity are not reclaimable": {
			node:  func() Node { n := node16(Resources{}); n.OnRequests = res(4000, 16); return n }(),
			usage: usage(3000, 8),
			want:  Resources{MilliCPU: 6900, Memory: wholeMiB(64<<30 - (64<<30)/5 - 1<<30 - 8<<30 - 16<<30)},
		},
		"the peak covers lasting use a source sampled apart from it": {
			// The lasting 9 CPU and 12Gi were read after the peak's last
			// sample: the peak is at least that, 16000 - 1600 - 500 - 9000.
			node: node16(Resources{}),
			usage: func() *Usage {
				u := usage(3000, 8)
				u.OnlineLasting = res(9000, 12)
				return u
			}(),
			want: Resources{MilliCPU: 4900, Memory: wholeMiB(64<<30 - (64<<30)/5 - 1<<30 - 12<<30)},
		},
		"online using everything leaves nothing, never less": {
			node: node16(Resources{}), usage: usage(16000, 64),
			want: Resources{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := Decide(tc.node, tc.usage, settings(), now)
			if diff := cmp.Diff(tc.want, d.Target); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPublish(t *testing.T) {
	// With online at 3000m and 8Gi the target is 10900m and 42.2Gi.
	target := Resources{MilliCPU: 10900, Memory: wholeMiB(64<<30 - (64<<30)/5 - 1<<30 - 8<<30)}
	cases := map[string]struct {
		node      Node
		usage     *Usage
		want      Resources
		wantEvict []string
		wantState State
	}{
		"grows from nothing by at most a minute's growth: 10% of 16 CPU and 64Gi": {
			node: node16(Resources{}), usage: usage(3000, 8),
			want: Resources{MilliCPU: 1600, Memory: wholeMiB((64 << 30) / 10)}, wantState: StateFresh,
		},
		"grows by the growth limit since the last change: 30 s, 5%": {
			node: changedAgo(30*time.Second, res(4000, 20)), usage: usage(3000, 8),
			want: Resources{MilliCPU: 4800, Memory: wholeMiB(20<<30 + (64<<30)/20)}, wantState: StateFresh,
		},
		"a growth step of exactly the minimum change is made": {
			// 12 s of growth is 2% of 16 CPU and 64Gi: 320m and 1310.7Mi.
			node: changedAgo(12*time.Second, res(4000, 20)), usage: usage(3000, 8),
			want: Resources{MilliCPU: 4320, Memory: 20<<30 + 1310<<20}, wantState: StateFresh,
		},
		"a growth step below the minimum change waits to be worth a write": {
			node: changedAgo(5*time.Second, res(4000, 20)), usage: usage(3000, 8),
			want: res(4000, 20), wantState: StateFresh,
		},
		"reaches the target and stops there": {
			node: changedAgo(time.Minute, res(10500, 40)), usage: usage(3000, 8),
			want: target, wantState: StateFresh,
		},
		"usage exactly stale-after old is still current": {
			node: changedAgo(time.Minute, res(4000, 20)),
			usage: func() *Usage {
				u := usage(3000, 8)
				u.At = ago(3 * time.Minute)
				return u
			}(),
			want: Resources{MilliCPU: 5600, Memory: wholeMiB(20<<30 + (64<<30)/10)}, wantState: StateFresh,
		},
		"a change below the minimum is not made": {
			node: changedAgo(time.Minute, Resources{MilliCPU: 10700, Memory: target.Memory}), usage: usage(3000, 8),
			want: Resources{MilliCPU: 10700, Memory: target.Memory}, wantState: StateFresh,
		},
		"a shrink below the minimum change is not made either": {
			// 200m over the target of 10900m, under the 320m minimum.
			node: changedAgo(time.Minute, Resources{MilliCPU: 11100, Memory: target.Memory}), usage: usage(3000, 8),
			want: Resources{MilliCPU: 11100, Memory: target.Memory}, wantState: StateFresh,
		},
		"shrinks at once when online use rises": {
			node: changedAgo(time.Minute, target, single("a", res(2000, 4), time.Hour)), usage: usage(9000, 8),
			want: Resources{MilliCPU: 4900, Memory: target.Memory}, wantState: StateFresh,
		},
		"never below what pods hold: online still has the eviction margin, so nobody is evicted": {
			// 16 CPU - 500m reserved - 9 online - 5.5 held leaves 1 CPU
			// free: inside the 10% margin, above the 5% eviction margin.
			node:  changedAgo(time.Minute, target, single("a", res(5500, 4), time.Hour)),
			usage: usage(9000, 8),
			want:  Resources{MilliCPU: 5500, Memory: target.Memory}, wantState: StateFresh,
		},
		"online takes the eviction margin: just enough is evicted to restore the margin": {
			// 16 - 0.5 - 9 - 6 = 0.5 CPU free, below 800m: back to the
			// target of 4.9 CPU by evicting the young pod.
			node:  changedAgo(time.Minute, target, single("old", res(3000, 4), 2*time.Hour), single("young", res(3000, 4), 5*time.Minute)),
			usage: usage(9000, 8),
			want:  res(3000, 4), wantEvict: []string{"young"}, wantState: StateFresh,
		},
		"exactly the eviction margin free: nothing is evicted": {
			// 16 - 0.5 - 9 - 5.7 = 800m free and 64 - 1 - 8 - held = 5%
			// of the memory free: online pods have the eviction margin.
			node:  changedAgo(time.Minute, target, single("a", Resources{MilliCPU: 5700, Memory: 55<<30 - (64<<30)*5/100}, time.Hour)),
			usage: usage(9000, 8),
			want:  Resources{MilliCPU: 5700, Memory: 55<<30 - (64<<30)*5/100}, wantState: StateFresh,
		},
		"offline pods on requested capacity count against the eviction margin": {
			// 16 - 0.5 - 5 online - 4 on requests - 6 held = 500m free:
			// back to the target of 4.9 CPU.
			node: func() Node {
				n := changedAgo(time.Minute, Resources{MilliCPU: 6000, Memory: target.Memory}, single("old", res(3000, 4), 2*time.Hour), single("young", res(3000, 4), 5*time.Minute))
				n.OnRequests = res(4000, 0)
				return n
			}(),
			usage: usage(5000, 8),
			want:  res(3000, 4), wantEvict: []string{"young"}, wantState: StateFresh,
		},
		"measured system use above the reservation counts against the eviction margin": {
			// 16 - 1.5 system - 8 online - 6 held = 500m free.
			node: changedAgo(time.Minute, Resources{MilliCPU: 6000, Memory: target.Memory}, single("old", res(3000, 4), 2*time.Hour), single("young", res(3000, 4), 5*time.Minute)),
			usage: func() *Usage {
				u := usage(8000, 8)
				u.System, u.SystemKnown = res(1500, 0), true
				return u
			}(),
			want: res(3000, 4), wantEvict: []string{"young"}, wantState: StateFresh,
		},
		"a CPU burst that has not lasted evicts nothing: offline pods yield CPU": {
			node:  changedAgo(time.Minute, target, single("old", res(3000, 4), 2*time.Hour), single("young", res(3000, 4), 5*time.Minute)),
			usage: burst(3000, 9000, 8),
			want:  Resources{MilliCPU: 6000, Memory: target.Memory}, wantState: StateFresh,
		},
		"memory evicts at once: it cannot be taken back": {
			// 64 - 1 reserved - 40 online - 20 held leaves 3Gi, below 5%.
			node:  changedAgo(time.Minute, res(10900, 40), single("old", res(1000, 10), 2*time.Hour), single("young", res(1000, 10), 5*time.Minute)),
			usage: burst(3000, 3000, 40),
			want:  res(1000, 10), wantEvict: []string{"young"}, wantState: StateFresh,
		},
		"memory a source read as lasting above its peak is the peak: it evicts": {
			// As "memory evicts at once", with the 40Gi read after the
			// peak's last sample.
			node: changedAgo(time.Minute, res(10900, 40), single("old", res(1000, 10), 2*time.Hour), single("young", res(1000, 10), 5*time.Minute)),
			usage: func() *Usage {
				u := usage(3000, 8)
				u.OnlineLasting.Memory = 40 << 30
				return u
			}(),
			want: res(1000, 10), wantEvict: []string{"young"}, wantState: StateFresh,
		},
		"memory evicts by its peak, not by what lasted": {
			// As "memory evicts at once", with 40Gi a peak that did not last.
			node: changedAgo(time.Minute, res(10900, 40), single("old", res(1000, 10), 2*time.Hour), single("young", res(1000, 10), 5*time.Minute)),
			usage: func() *Usage {
				u := usage(3000, 40)
				u.OnlineLasting.Memory = 8 << 30
				return u
			}(),
			want: res(1000, 10), wantEvict: []string{"young"}, wantState: StateFresh,
		},
		"terminating pods count as released": {
			node: func() Node {
				leaving := single("leaving", res(3000, 4), 5*time.Minute)
				leaving.Terminating = true
				return changedAgo(time.Minute, target, single("old", res(3000, 4), 2*time.Hour), leaving)
			}(),
			usage: usage(9000, 8),
			want:  Resources{MilliCPU: 4900, Memory: target.Memory}, wantState: StateFresh,
		},
		"in the cool-down it offers only what pods hold": {
			node: func() Node {
				n := changedAgo(time.Minute, res(3000, 4), single("old", res(3000, 4), 2*time.Hour))
				n.CooldownUntil = now.Add(time.Minute)
				return n
			}(),
			usage: usage(3000, 8),
			want:  res(3000, 4), wantState: StateFresh,
		},
		"in the cool-down it offers only what pods hold, less than before": {
			node: func() Node {
				n := changedAgo(time.Minute, res(6000, 20), single("old", res(3000, 4), 2*time.Hour))
				n.CooldownUntil = now.Add(time.Minute)
				return n
			}(),
			usage: usage(3000, 8),
			want:  res(3000, 4), wantState: StateFresh,
		},
		"memory is whole MiB, but never below what pods hold": {
			// A pod asking for 1G holds 1e9 bytes, 953.67Mi: rounded down
			// to 953Mi the node would offer less than its pods hold.
			node: func() Node {
				n := changedAgo(time.Minute, Resources{MilliCPU: 3000, Memory: 1e9}, single("old", Resources{MilliCPU: 3000, Memory: 1e9}, 2*time.Hour))
				n.CooldownUntil = now.Add(time.Minute)
				return n
			}(),
			usage: usage(3000, 8),
			want:  Resources{MilliCPU: 3000, Memory: 1e9}, wantState: StateFresh,
		},
		"after the cool-down it grows again": {
			node: func() Node {
				n := changedAgo(30*time.Second, res(3000, 4), single("old", res(3000, 4), 2*time.Hour))
				n.CooldownUntil = now.Add(-time.Second)
				return n
			}(),
			usage: usage(3000, 8),
			want:  Resources{MilliCPU: 3800, Memory: wholeMiB(4<<30 + (64<<30)/20)}, wantState: StateFresh,
		},
		"stale usage freezes: no growth": {
			node:  changedAgo(time.Minute, res(2000, 4)),
			usage: &Usage{OnlinePeak: res(1000, 1), At: ago(4 * time.Minute)},
			want:  res(2000, 4), wantState: StateStale,
		},
		"stale usage freezes: no eviction however high it reads": {
			node:  changedAgo(time.Minute, target, single("a", res(8000, 4), time.Minute)),
			usage: &Usage{OnlinePeak: res(16000, 60), OnlineLasting: res(16000, 60), At: ago(4 * time.Minute)},
			want:  target, wantState: StateStale,
		},
		"no usage for a node that publishes: frozen, not taken back": {
			// The source lost the node (or failed): what it offers and what
			// its pods hold stay as they are until usage returns.
			node: changedAgo(time.Minute, res(6000, 20), single("a", res(4000, 8), time.Hour)),
			want: res(6000, 20), wantState: StateStale,
		},
		"no usage at all: nothing is published": {
			node: node16(Resources{}),
			want: Resources{}, wantState: StateStale,
		},
		"a partial history does not grow capacity, but shrinks it": {
			node: changedAgo(time.Minute, res(6000, 20)),
			usage: func() *Usage {
				u := usage(12000, 8)
				u.Partial = true
				return u
			}(),
			want: Resources{MilliCPU: 1900, Memory: 20 << 30}, wantState: StateFresh,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := Decide(tc.node, tc.usage, settings(), now)
			if diff := cmp.Diff(tc.want, d.Published); diff != "" {
				t.Errorf("published (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvict, names(d.Evict)); diff != "" {
				t.Errorf("evicted (-want +got):\n%s", diff)
			}
			if d.State != tc.wantState {
				t.Errorf("state = %s, want %s", d.State, tc.wantState)
			}
			if len(d.Evict) > 0 && !d.CooldownUntil.Equal(now.Add(5*time.Minute)) {
				t.Errorf("cool-down until %v, want 5m from now", d.CooldownUntil)
			}
			if d.Why == "" {
				t.Error("no explanation")
			}
		})
	}
}

// TestExplanation checks what a decision records of its inputs: what
// `backfill describe node` shows.
func TestExplanation(t *testing.T) {
	cases := map[string]struct {
		node    Node
		usage   *Usage
		want    Explanation
		wantWhy string
	}{
		"an eviction records every input of the formula": {
			// Target: 16 - 1.6 margin - 1.5 system - 9 peak - 1 on requests;
			// free: 16 - 1.5 - 7 lasting - 1 - 6 held = 500m, under 800m.
			node: func() Node {
				n := changedAgo(time.Minute, Resources{MilliCPU: 6000, Memory: 20 << 30}, single("old", res(3000, 4), 2*time.Hour), single("young", res(3000, 4), 5*time.Minute))
				n.OnRequests = res(1000, 2)
				return n
			}(),
			usage: &Usage{OnlinePeak: res(9000, 10), OnlineLasting: res(7000, 10), System: res(1500, 0), SystemKnown: true, At: ago(10 * time.Second)},
			want: Explanation{
				State: StateFresh, At: now, UsageAt: ago(10 * time.Second),
				Capacity: res(16000, 64), Margin: Resources{MilliCPU: 1600, Memory: (64 << 30) / 5}, Reserved: res(500, 1), System: res(1500, 0),
				OnlinePeak: res(9000, 10), OnlineLasting: res(7000, 10), OnRequests: res(1000, 2),
				Target: Resources{MilliCPU: 2900, Memory: wholeMiB(51<<30 - (64<<30)/5)},
				Held:   res(6000, 8), Need: Resources{MilliCPU: 1100}, Evicting: res(3000, 4), Published: res(3000, 4),
				CooldownUntil: now.Add(5 * time.Minute),
			},
			wantWhy: "evicting 1 offline pod(s)",
		},
		"stale usage records its age and nothing of what it measured": {
			node:  changedAgo(time.Minute, res(6000, 20), single("a", res(4000, 8), time.Hour)),
			usage: &Usage{OnlinePeak: res(16000, 60), OnlineLasting: res(16000, 60), At: ago(4 * time.Minute)},
			want: Explanation{
				State: StateStale, At: now, UsageAt: ago(4 * time.Minute),
				Capacity: res(16000, 64), Margin: Resources{MilliCPU: 1600, Memory: (64 << 30) / 5}, Reserved: res(500, 1),
				Held: res(4000, 8), Published: res(6000, 20),
			},
			wantWhy: "frozen: the newest usage is 4m0s old (stale after 3m0s)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := Decide(tc.node, tc.usage, settings(), now)
			if diff := cmp.Diff(tc.want, d.Explanation, cmpopts.IgnoreFields(Explanation{}, "Why")); diff != "" {
				t.Errorf("explanation (-want +got):\n%s", diff)
			}
			if !strings.Contains(d.Why, tc.wantWhy) {
				t.Errorf("why = %q, want it to contain %q", d.Why, tc.wantWhy)
			}
		})
	}
}

func TestWhy(t *testing.T) {
	cases := map[string]struct {
		before, after, target Resources
		partial               bool
		want                  string
	}{
		"unchanged": {
			before: res(4000, 8), after: res(4000, 8), target: res(4100, 8),
			want: "unchanged: within the minimum change of the target",
		},
		"unchanged on a partial history: holding": {
			before: res(4000, 8), after: res(4000, 8), target: res(9000, 8), partial: true,
			want: "holding: the usage history does not yet cover the window, so capacity does not grow",
		},
		"only the resource that moved is named": {
			before: res(4000, 8), after: res(3000, 8), target: res(3000, 8),
			want: "cpu shrank at once: online use rose",
		},
		"grew to the target, or toward it at the growth limit": {
			before: res(4000, 8), after: res(5000, 9), target: res(5000, 12),
			want: "cpu grew to the target; memory is growing toward the target at the growth limit",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := why(tc.before, tc.after, tc.target, tc.partial); got != tc.want {
				t.Errorf("why = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWholeMiB(t *testing.T) {
	for bytes, want := range map[int64]int64{
		0:           0,
		1<<20 - 1:   0,
		1 << 20:     1 << 20,
		1e9:         953 << 20, // 1G is 953.67Mi
		5<<30 + 999: 5 << 30,
	} {
		if got := wholeMiB(bytes); got != want {
			t.Errorf("wholeMiB(%d) = %d, want %d", bytes, got, want)
		}
	}
}

func TestSettingsValidate(t *testing.T) {
	bad := map[string]func(*Settings){
		"--reclaim-cpu-margin=120":      func(s *Settings) { s.Margin.CPU = 120 },
		"--reclaim-memory-margin=-1":    func(s *Settings) { s.Margin.Memory = -1 },
		"--reclaim-window=0s":           func(s *Settings) { s.Window = 0 },
		"--reclaim-interval=0s":         func(s *Settings) { s.Interval = 0 },
		"--reclaim-cooldown=-1m0s":      func(s *Settings) { s.Cooldown = -time.Minute },
		"--reclaim-growth-per-minute=0": func(s *Settings) { s.GrowthPerMinute = 0 },
		"--reclaim-min-change=60":       func(s *Settings) { s.MinChange = 60 },
		"--reclaim-stale-after=1s":      func(s *Settings) { s.StaleAfter = time.Second },
		"--reclaim-online-window=500ms": func(s *Settings) { s.OnlineWindow = 500 * time.Millisecond },
		"--reclaim-online-window=2m0s is not shorter than --reclaim-online-evict-after=2m0s": func(s *Settings) {
			s.OnlineWindow = 2 * time.Minute
		},
		"--reclaim-online-window=1m0s is not shorter than --reclaim-online-evict-after=30s": func(s *Settings) {
			s.OnlineEvictAfter = 30 * time.Second
		},
		"--reclaim-online-window=1m0s is not shorter than --reclaim-online-evict-after=0s": func(s *Settings) {
			s.OnlineEvictAfter = 0
		},
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatalf("the defaults are refused: %v", err)
	}
	good := map[string]func(*Settings){
		"a window a second shorter than evict-after": func(s *Settings) { s.OnlineWindow = s.OnlineEvictAfter - time.Second },
		"a window of 1s": func(s *Settings) { s.OnlineWindow = time.Second },
	}
	for name, change := range good {
		s := DefaultSettings()
		change(&s)
		if err := s.Validate(); err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
	}
	for flag, breakIt := range bad {
		s := DefaultSettings()
		breakIt(&s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: error %v, want one naming it", flag, err)
		}
	}
}
