package reclaim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	testclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// noted keeps the reasons and actions of the events a controller emits.
type noted struct{ events []string }

func (n *noted) Eventf(_, _ runtime.Object, _, reason, action, note string, args ...any) {
	n.events = append(n.events, reason+"/"+action+": "+fmt.Sprintf(note, args...))
}

// A step is what the evictions released: the Eviction API refusing every
// victim (a PodDisruptionBudget) takes the step back whole, refusing some
// lowers the hold only by what the others released; the cool-down runs
// either way, so the step is tried again once, after it.
func TestActOnAStepTheEvictionAPIRefuses(t *testing.T) {
	s := settings()
	var pods []Pod
	for i := range 8 {
		pods = append(pods, single(fmt.Sprintf("p%d", i), res(1000, 1), time.Duration(i+1)*time.Minute))
	}
	cases := map[string]struct {
		refuse        []string
		wantHold      *OnlineHold
		wantPublished int64
		wantEvent     string
		wantWhy       string
	}{
		"every victim evicted: the step as decided": {
			wantHold:      &OnlineHold{Signal: SignalLatency, Why: missedWhy, Since: ago(3 * time.Minute), HarmSince: ago(3 * time.Minute), MilliCPU: 6400, Steps: 1},
			wantPublished: 6000, wantEvent: "OnlineHarmed/GiveBack",
		},
		"every victim refused: no step, the hold keeps its CPU": {
			refuse:        []string{"p0", "p1"},
			wantHold:      &OnlineHold{Signal: SignalLatency, Why: missedWhy, Since: ago(3 * time.Minute), HarmSince: ago(3 * time.Minute), MilliCPU: 8000},
			wantPublished: 8000, wantEvent: "OnlineHarmed/GiveBackRefused",
			wantWhy: "the Eviction API refused to evict the offline pods chosen",
		},
		"one victim refused: a step of what the other released": {
			refuse:        []string{"p1"},
			wantHold:      &OnlineHold{Signal: SignalLatency, Why: missedWhy, Since: ago(3 * time.Minute), HarmSince: ago(3 * time.Minute), MilliCPU: 7000, Steps: 1},
			wantPublished: 7000, wantEvent: "OnlineHarmed/GiveBack",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			refused := map[string]bool{}
			for _, p := range tc.refuse {
				refused[p] = true
			}
			cl := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				SubResourceCreate: func(_ context.Context, _ client.Client, _ string, obj client.Object, _ client.Object, _ ...client.SubResourceCreateOption) error {
					if refused[obj.GetName()] {
						return apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
					}
					return nil
				},
				Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
					return nil
				},
			}).Build()
			events := &noted{}
			c := &Controller{client: cl, settings: s, notice: 20 * time.Second, recorder: events, clock: testclock.NewFakePassiveClock(now), log: logr.Discard()}

			n := changedAgo(time.Hour, res(8000, 20), pods...)
			n.Online = holding(3*time.Minute, 8000)
			u := usage(3000, 8)
			u.Online = missed(240 * time.Millisecond)
			d := Decide(n, u, s, now)
			if got := names(d.Evict); !cmp.Equal(got, []string{"p0", "p1"}) {
				t.Fatalf("victims %v, want the two that lose least, [p0 p1]", got)
			}
			d, err := c.act(context.Background(), n, d, Explanation{State: StateFresh, Online: n.Online})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantHold, d.Online); diff != "" {
				t.Errorf("hold (-want +got):\n%s", diff)
			}
			if d.Published.MilliCPU != tc.wantPublished {
				t.Errorf("published %dm, want %dm", d.Published.MilliCPU, tc.wantPublished)
			}
			if want := now.Add(s.Cooldown); !d.CooldownUntil.Equal(want) {
				t.Errorf("cool-down until %v, want %v: the step is tried again only after it", d.CooldownUntil, want)
			}
			if len(events.events) != 1 || !strings.HasPrefix(events.events[0], tc.wantEvent+":") {
				t.Errorf("events %q, want one %s", events.events, tc.wantEvent)
			}
			if !strings.Contains(d.Why, tc.wantWhy) {
				t.Errorf("why %q, want it to say %q", d.Why, tc.wantWhy)
			}
		})
	}
}

func TestStepReleased(t *testing.T) {
	before := holding(3*time.Minute, 8000)
	stepped := func(milliCPU int64) *OnlineHold {
		h := holding(3*time.Minute, milliCPU)
		h.Steps = 1
		return h
	}
	cases := map[string]struct {
		before, after  *OnlineHold
		held, released int64
		want           *OnlineHold
		wantUndone     bool
	}{
		"no hold before: nothing to take back": {
			after: holding(0, 8000), held: 8000, released: 0, want: holding(0, 8000),
		},
		"no step: the hold as decided, whatever was released": {
			before: before, after: holding(3*time.Minute, 8000), held: 8000, released: 2000, want: holding(3*time.Minute, 8000),
		},
		"a step that released all it asked": {
			before: before, after: stepped(6400), held: 8000, released: 2000, want: stepped(6400),
		},
		"a step that released part of it: lowered only by that": {
			before: before, after: stepped(6400), held: 8000, released: 1000, want: stepped(7000),
		},
		"a step that released nothing: undone": {
			before: before, after: stepped(6400), held: 8000, released: 0, want: before, wantUndone: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, undone := stepReleased(tc.before, tc.after, tc.held, tc.released)
			if diff := cmp.Diff(tc.want, got); diff != "" || undone != tc.wantUndone {
				t.Errorf("undone %v, want %v; hold (-want +got):\n%s", undone, tc.wantUndone, diff)
			}
		})
	}
}
