package cli

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	jobprogress "github.com/backfill-dev/backfill/internal/progress"
)

func TestCheckpointHintArithmetic(t *testing.T) {
	for name, tc := range map[string]struct {
		totals      jobprogress.Totals
		disruptions int32
		save        time.Duration
		wantMTBD    time.Duration
		want        time.Duration // the interval, to the second
		wantNone    bool
	}{
		// sqrt(2 × 30 s × 7200 s) = sqrt(432000) = 657.3 s
		"one disruption in 2h": {totals: jobprogress.Totals{Productive: 110 * time.Minute, ProgressLost: 10 * time.Minute}, disruptions: 1,
			save: 30 * time.Second, wantMTBD: 2 * time.Hour, want: 657 * time.Second},
		// 8h over 4: 2h each, whatever the waiting and recovery
		"waiting and recovery do not count": {totals: jobprogress.Totals{Productive: 7 * time.Hour, ProgressLost: time.Hour, Recovery: 3 * time.Hour, Waiting: 5 * time.Hour},
			disruptions: 4, save: 30 * time.Second, wantMTBD: 2 * time.Hour, want: 657 * time.Second},
		// sqrt(2 × 120 s × 1800 s) = sqrt(432000): a save 4× as long, disruptions 4× as often
		"slow saves, frequent disruptions": {totals: jobprogress.Totals{Productive: 50 * time.Minute, ProgressLost: 10 * time.Minute}, disruptions: 2,
			save: 2 * time.Minute, wantMTBD: 30 * time.Minute, want: 657 * time.Second},
		// sqrt(2 × 30 s × 86400 s) = sqrt(5184000) = 2276.8 s
		"a day between disruptions": {totals: jobprogress.Totals{Productive: 24 * time.Hour}, disruptions: 1,
			save: 30 * time.Second, wantMTBD: 24 * time.Hour, want: 2276 * time.Second},
		"no disruption yet":            {totals: jobprogress.Totals{Productive: 5 * time.Hour}, save: 30 * time.Second, wantNone: true},
		"disrupted before it ever ran": {totals: jobprogress.Totals{Waiting: time.Hour, Recovery: time.Minute}, disruptions: 1, save: 30 * time.Second, wantNone: true},
	} {
		t.Run(name, func(t *testing.T) {
			h, ok := hintFor(tc.totals, tc.disruptions, tc.save)
			if tc.wantNone {
				if ok {
					t.Fatalf("hintFor = %+v, want no hint", h)
				}
				return
			}
			if !ok {
				t.Fatal("hintFor: no hint, want one")
			}
			if h.mtbd != tc.wantMTBD {
				t.Errorf("mean time between disruptions %v, want %v", h.mtbd, tc.wantMTBD)
			}
			if got := h.interval.Truncate(time.Second); got != tc.want {
				t.Errorf("interval %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheckpointHintInWords(t *testing.T) {
	h, _ := hintFor(jobprogress.Totals{Productive: 3*time.Hour + 50*time.Minute, ProgressLost: 10 * time.Minute}, 2, 30*time.Second)
	want := "checkpoint every 11m if a save takes 30s (Young/Daly: sqrt(2 × save × MTBD) = sqrt(2 × 30s × 2h)); " +
		"MTBD, the mean time between disruptions, is (3h50m productive + 10m lost) / 2 disruptions"
	if got := h.String(); got != want {
		t.Errorf("hint:\n got %s\nwant %s", got, want)
	}
}

func TestSpan(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                       "0s",
		0:                                  "0s",
		45 * time.Second:                   "45s",
		59600 * time.Millisecond:           "1m",
		4*time.Minute + 20*time.Second:     "4m20s",
		5 * time.Minute:                    "5m",
		11*time.Minute + 37*time.Second:    "12m",
		59*time.Minute + 40*time.Second:    "1h",
		2*time.Hour + 15*time.Minute:       "2h15m",
		47*time.Hour + 59*time.Minute + 50: "47h59m",
		50*time.Hour + 10*time.Minute:      "2d2h",
		72 * time.Hour:                     "3d",
	} {
		if got := span(d); got != want {
			t.Errorf("span(%v) = %q, want %q", d, got, want)
		}
	}
}

// The goodput account is brought up to now: a job running since its last
// account has been productive since.
func TestGoodputBroughtToNow(t *testing.T) {
	job := makeJob("ns", "j", time.Hour).replicas(kubeflowv1.ReplicaTypeWorker, 1, 0).
		condition(kubeflowv1.JobRunning, corev1.ConditionTrue, "TFJobRunning", "", 50*time.Minute).
		goodput(0, 0, 0, 10*time.Minute, 50*time.Minute, 50*time.Minute).obj()
	got := jobprogress.TotalsAt(&job.Status, job.CreationTimestamp.Time, fixedNow)
	if got.Productive != 50*time.Minute || got.Waiting != 10*time.Minute {
		t.Errorf("totals %+v, want 50m productive, 10m waiting", got)
	}
}
