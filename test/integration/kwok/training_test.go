//go:build integration

package kwok

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	simkwok "github.com/backfill-dev/backfill/internal/devcluster/kwok"
)

func TestSimulatedTrainingEnds(t *testing.T) {
	cases := map[string]struct {
		duration     string
		exitCode     string // "" for none
		wantPhase    corev1.PodPhase
		wantExitCode int32
		wantReason   string
	}{
		"succeeds after its duration": {
			duration: "2s", wantPhase: corev1.PodSucceeded, wantExitCode: 0, wantReason: "Completed",
		},
		"fails with its exit code after its duration": {
			duration: "2s", exitCode: "137", wantPhase: corev1.PodFailed, wantExitCode: 137, wantReason: "Error",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := makePod("training-"+strings.ToLower(string(tc.wantPhase))).OnNode(cpuNode).
				Annotation(simkwok.SimDurationAnnotation, tc.duration)
			if tc.exitCode != "" {
				b.Annotation(simkwok.SimExitCodeAnnotation, tc.exitCode)
			}
			pod := b.Create(t)

			// It runs first: the end comes from the duration, not at once.
			waitForPod(t, pod, "Running", podPhaseIs(corev1.PodRunning))
			got := waitForPod(t, pod, string(tc.wantPhase), podPhaseIs(tc.wantPhase))

			term := terminated(got)
			if term == nil {
				t.Fatalf("container statuses = %+v, want a terminated container", got.Status.ContainerStatuses)
			}
			if term.ExitCode != tc.wantExitCode || term.Reason != tc.wantReason {
				t.Errorf("terminated with exit code %d (%s), want %d (%s)", term.ExitCode, term.Reason, tc.wantExitCode, tc.wantReason)
			}
			// The end is due the duration after the start as the API shows
			// it (whole seconds), so the API's timestamps span at least it.
			want, _ := time.ParseDuration(tc.duration)
			if ran := term.FinishedAt.Sub(term.StartedAt.Time); ran < want {
				t.Errorf("ran from %s to %s, want at least %s", term.StartedAt, term.FinishedAt, want)
			}
			if podConditionTrue(got, corev1.PodReady) {
				t.Errorf("a finished pod is still Ready: %+v", got.Status.Conditions)
			}
		})
	}
}
