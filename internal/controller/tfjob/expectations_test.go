package tfjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

func TestExpectationsSatisfied(t *testing.T) {
	const jobUID = types.UID("uid-j")
	worker0 := func() *corev1.Pod { return makePod(j, Worker, 0).phase(corev1.PodRunning).obj() }
	deleting0 := makePod(j, Worker, 0).phase(corev1.PodRunning).deleting(testNow, 30).obj()
	released0 := func() *corev1.Pod {
		pod := worker0()
		pod.Finalizers = nil
		return pod
	}()
	cases := map[string]struct {
		pending  *pending // nil: nothing expected
		version  string
		obs      observed
		now      time.Time
		wantOK   bool
		wantWait time.Duration
	}{
		"nothing expected": {
			obs: observePods(), now: testNow, wantOK: true,
		},
		"a created pod not in the cache yet": {
			pending: &pending{created: sets.New(podKey("j-worker-0"))},
			obs:     observePods(), now: testNow.Add(30 * time.Second),
			wantWait: expectationTimeout - 30*time.Second,
		},
		"a created pod in the cache": {
			pending: &pending{created: sets.New(podKey("j-worker-0"))},
			obs:     observePods(worker0()), now: testNow, wantOK: true,
		},
		"a created pod whose name another owner holds": {
			pending: &pending{created: sets.New(podKey("j-worker-0"))},
			obs:     withTaken(observePods(), []string{"j-worker-0"}, nil), now: testNow, wantOK: true,
		},
		"a created service is not a pod of the same name": {
			pending: &pending{created: sets.New(serviceKey("j-worker-0"))},
			obs:     observePods(worker0()), now: testNow, wantWait: expectationTimeout,
		},
		"a created service in the cache": {
			pending: &pending{created: sets.New(serviceKey("j-worker-0"))},
			obs:     observe(makeJob("j").replicas(Worker, 1, Never).obj()), now: testNow, wantOK: true,
		},
		"the job still at the version before our status write": {
			pending: &pending{staleVersion: "41"},
			version: "41", obs: observePods(), now: testNow, wantWait: expectationTimeout,
		},
		"the job past our status write": {
			pending: &pending{staleVersion: "41"},
			version: "42", obs: observePods(), now: testNow, wantOK: true,
		},
		"a deleted pod not yet terminating": {
			pending: &pending{deleted: sets.New(worker0().UID)},
			obs:     observePods(worker0()), now: testNow, wantWait: expectationTimeout,
		},
		"a deleted pod terminating": {
			pending: &pending{deleted: sets.New(worker0().UID)},
			obs:     observePods(deleting0), now: testNow, wantOK: true,
		},
		"a deleted pod gone": {
			pending: &pending{deleted: sets.New(worker0().UID)},
			obs:     observePods(), now: testNow, wantOK: true,
		},
		"a released pod still with our finalizer": {
			pending: &pending{released: sets.New(worker0().UID)},
			obs:     observePods(worker0()), now: testNow, wantWait: expectationTimeout,
		},
		"a released pod without our finalizer": {
			pending: &pending{released: sets.New(worker0().UID)},
			obs:     observePods(released0), now: testNow, wantOK: true,
		},
		"the wait timed out": {
			pending: &pending{created: sets.New(podKey("j-worker-0"))},
			obs:     observePods(), now: testNow.Add(expectationTimeout), wantOK: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newExpectations()
			if tc.pending != nil {
				e.expect(jobUID, tc.pending, testNow)
			}
			ok, wait := e.satisfied(jobUID, tc.version, tc.obs, tc.now)
			if ok != tc.wantOK || wait != tc.wantWait {
				t.Errorf("satisfied = %v, %v; want %v, %v", ok, wait, tc.wantOK, tc.wantWait)
			}
			// Once satisfied, a job waits for nothing more.
			if ok {
				if again, _ := e.satisfied(jobUID, tc.version, observePods(), tc.now); !again {
					t.Errorf("satisfied again = false, want true: the expectation was kept")
				}
			}
		})
	}
}

func TestExpectationsForget(t *testing.T) {
	e := newExpectations()
	e.expect("uid-a", &pending{created: sets.New(podKey("a-worker-0"))}, testNow)
	e.expect("uid-b", &pending{created: sets.New(podKey("b-worker-0"))}, testNow)
	e.forget("uid-a")
	got := map[types.UID]bool{}
	for _, uid := range []types.UID{"uid-a", "uid-b"} {
		got[uid], _ = e.satisfied(uid, "", observePods(), testNow)
	}
	want := map[types.UID]bool{"uid-a": true, "uid-b": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("satisfied after forget (-want +got):\n%s", diff)
	}
}

// A pass that wrote nothing keeps no entry, and drops the one before it.
func TestExpectationsOfAPassWithoutWrites(t *testing.T) {
	e := newExpectations()
	nothing := func() *pending {
		return &pending{created: sets.New[string](), deleted: sets.New[types.UID](), released: sets.New[types.UID](), noticed: sets.New[types.UID]()}
	}
	e.expect("uid-a", nothing(), testNow)
	e.expect("uid-b", &pending{created: sets.New(podKey("b-worker-0"))}, testNow)
	e.expect("uid-b", nothing(), testNow)
	if len(e.byJob) != 0 {
		t.Errorf("entries after passes without writes: %v, want none", e.byJob)
	}
}

func TestSummarise(t *testing.T) {
	cases := map[string]struct {
		names []string
		want  string
	}{
		"none":        {want: ""},
		"five":        {names: []string{"a", "b", "c", "d", "e"}, want: "a, b, c, d, e"},
		"six or more": {names: []string{"a", "b", "c", "d", "e", "f", "g"}, want: "a, b, c, d, e and 2 more"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, summarise(tc.names)); diff != "" {
				t.Errorf("summarise (-want +got):\n%s", diff)
			}
		})
	}
}
