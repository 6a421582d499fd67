package reclaim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

// cpu is milli-CPU and memory in GiB.
func res(milliCPU int64, gib int64) Resources {
	return Resources{MilliCPU: milliCPU, Memory: gib << 30}
}

// single is a one-replica job's pod that started ago.
func single(name string, batch Resources, started time.Duration) Pod {
	return Pod{Namespace: "ml", Name: name, UID: name, Batch: batch, Started: ago(started),
		Job: &Job{Namespace: "ml", Name: name, Replicas: 1, Since: ago(started)}}
}

// gang is the pods of one distributed job, all on the node, all started
// ago; the job has replicas pods in all.
func gang(job string, replicas int, batch Resources, started time.Duration, names ...string) []Pod {
	j := &Job{Namespace: "ml", Name: job, Replicas: replicas, Since: ago(started)}
	var pods []Pod
	for _, n := range names {
		pods = append(pods, Pod{Namespace: "ml", Name: n, UID: n, Batch: batch, Started: ago(started), Job: j})
	}
	return pods
}

func names(pods []Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestChooseVictims(t *testing.T) {
	cases := map[string]struct {
		pods []Pod
		need Resources
		want []string
	}{
		"nothing needed": {
			pods: []Pod{single("a", res(1000, 1), time.Hour)},
		},
		"just enough: one pod covers the deficit": {
			pods: []Pod{single("old", res(2000, 2), 3*time.Hour), single("new", res(2000, 2), 10*time.Minute)},
			need: res(1500, 0),
			want: []string{"new"},
		},
		"least work lost: the most recently started single job": {
			pods: []Pod{single("a", res(1000, 1), 50*time.Minute), single("b", res(1000, 1), 20*time.Minute), single("c", res(1000, 1), 40*time.Minute)},
			need: res(2000, 0),
			want: []string{"b", "c"},
		},
		"a whole small job before one replica of a large gang": {
			pods: append(gang("big", 8, res(1000, 1), 30*time.Minute, "big-worker-3"), single("small", res(1000, 1), 30*time.Minute)),
			need: res(1000, 0),
			want: []string{"small"},
		},
		"a young gang loses less than an old single job": {
			pods: append(gang("young", 4, res(1000, 1), 5*time.Minute, "young-worker-0"), single("old", res(1000, 1), 3*time.Hour)),
			need: res(1000, 0),
			want: []string{"young-worker-0"},
		},
		"once a gang is hit, its other pods here cost nothing more": {
			pods: append(gang("g", 4, res(1000, 1), 5*time.Minute, "g-worker-0", "g-worker-1"), single("s", res(1000, 1), 30*time.Minute)),
			need: res(2000, 0),
			want: []string{"g-worker-0", "g-worker-1"},
		},
		"a gang already hit costs nothing more, even beside a job that loses as much": {
			// g-worker-1 restarted 10m ago: g loses 2 x 10m, as much as s
			// (1 x 20m), and its restarted pod goes first. After it, the
			// rest of g is lost anyway: g-worker-0 costs nothing, where s
			// would lose 20m more.
			pods: func() []Pod {
				g := gang("g", 2, res(1000, 1), 30*time.Minute, "g-worker-0", "g-worker-1")
				g[1].Started, g[1].Job.Since = ago(10*time.Minute), ago(10*time.Minute)
				return append(g, single("s", res(1000, 1), 20*time.Minute))
			}(),
			need: res(2000, 0),
			want: []string{"g-worker-1", "g-worker-0"},
		},
		"a job already disrupted elsewhere goes first": {
			pods: func() []Pod {
				g := gang("g", 4, res(1000, 1), 3*time.Hour, "g-worker-0")
				g[0].Job.Disrupted = true
				return append(g, single("s", res(1000, 1), time.Minute))
			}(),
			need: res(1000, 0),
			want: []string{"g-worker-0"},
		},
		"terminating pods are released already, never chosen": {
			pods: func() []Pod {
				leaving := single("leaving", res(4000, 4), time.Minute)
				leaving.Terminating = true
				return []Pod{leaving, single("stay", res(1000, 1), time.Hour)}
			}(),
			need: res(1000, 0),
			want: []string{"stay"},
		},
		"lower priority first when the work lost is equal": {
			pods: func() []Pod {
				hi, lo := single("hi", res(1000, 1), time.Hour), single("lo", res(1000, 1), time.Hour)
				hi.Priority, lo.Priority = 10, -100
				return []Pod{hi, lo}
			}(),
			need: res(1000, 0),
			want: []string{"lo"},
		},
		"a pod the others make unneeded is spared": {
			// "small" loses least and goes first, "big" must go too for the
			// rest; with "big", "small" is not needed any more.
			pods: []Pod{single("small", res(500, 0), 5*time.Minute), single("big", res(4000, 4), 2*time.Hour)},
			need: res(3000, 0),
			want: []string{"big"},
		},
		"of the victims the last one makes unneeded, the costlier is spared, and only one": {
			// Chosen a, b, then c for the rest; with c, either a or b is
			// unneeded but not both: b, which loses more, is spared.
			pods: []Pod{single("a", res(1000, 1), 5*time.Minute), single("b", res(1000, 1), 10*time.Minute), single("c", res(2000, 2), 2*time.Hour)},
			need: res(3000, 0),
			want: []string{"a", "c"},
		},
		"memory deficit: pods without batch memory do not help": {
			pods: []Pod{single("cpu-only", res(4000, 0), time.Minute), single("mem", res(0, 8), time.Hour)},
			need: res(0, 6),
			want: []string{"mem"},
		},
		"both resources short": {
			pods: []Pod{single("a", res(3000, 1), time.Minute), single("b", res(500, 6), 2*time.Minute), single("c", res(3000, 6), time.Hour)},
			need: res(3000, 6),
			want: []string{"a", "b"},
		},
		"not enough to cover: everything that helps": {
			pods: []Pod{single("a", res(1000, 1), time.Minute), single("b", res(1000, 1), time.Hour)},
			need: res(5000, 0),
			want: []string{"a", "b"},
		},
		"not enough to cover: a pod that helps with nothing still short is spared": {
			// m covers the memory; m2 would add memory only, while CPU is
			// what is still short.
			pods: []Pod{single("m", res(0, 1), time.Minute), single("m2", res(0, 1), 2*time.Minute), single("c1", res(1000, 0), time.Hour), single("c2", res(1000, 0), 2*time.Hour)},
			need: res(3000, 1),
			want: []string{"m", "c1", "c2"},
		},
		"an offline pod of no TFJob costs its own time": {
			pods: []Pod{{Namespace: "etl", Name: "loose", UID: "loose", Batch: res(1000, 1), Started: ago(time.Minute)}, single("s", res(1000, 1), time.Hour)},
			need: res(1000, 0),
			want: []string{"loose"},
		},
		"an offline pod of no TFJob that ran longer loses more": {
			pods: []Pod{{Namespace: "etl", Name: "loose", UID: "loose", Batch: res(1000, 1), Started: ago(2 * time.Hour)}, single("s", res(1000, 1), time.Hour)},
			need: res(1000, 0),
			want: []string{"s"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := names(ChooseVictims(tc.pods, tc.need, now))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("victims (-want +got):\n%s", diff)
			}
		})
	}
}
