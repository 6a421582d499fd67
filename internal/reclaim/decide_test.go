package reclaim

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
		"a growth step below the minimum change waits to be worth a write": {
			node: changedAgo(5*time.Second, res(4000, 20)), usage: usage(3000, 8),
			want: res(4000, 20), wantState: StateFresh,
		},
		"reaches the target and stops there": {
			node: changedAgo(time.Minute, res(10500, 40)), usage: usage(3000, 8),
			want: target, wantState: StateFresh,
		},
		"a change below the minimum is not made": {
			node: changedAgo(time.Minute, Resources{MilliCPU: 10700, Memory: target.Memory}), usage: usage(3000, 8),
			want: Resources{MilliCPU: 10700, Memory: target.Memory}, wantState: StateFresh,
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
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatalf("the defaults are refused: %v", err)
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
