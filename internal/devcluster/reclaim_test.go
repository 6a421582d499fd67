package devcluster

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ManagerFlags tells a manager started by hand the local cluster's
// Prometheus, reclaim settings scaled to its day, and report endpoint,
// as `backfill manager` spells its flags.
func TestManagerFlags(t *testing.T) {
	stateDir := t.TempDir()
	certDir := filepath.Join(stateDir, "pki", "reports")
	cases := map[string]struct {
		dayLength time.Duration
		want      []string
	}{
		"the default day: an hour is a minute": {
			dayLength: 24 * time.Minute,
			want: []string{
				"--reclaim-usage-source=prometheus", "--prometheus-url=http://127.0.0.1:9090",
				"--prometheus-rate-window=20s",
				"--reclaim-interval=5s", "--reclaim-window=2m0s",
				"--reclaim-cooldown=1m0s", "--reclaim-stale-after=30s",
				"--reclaim-cpu-eviction-delay=15s",
				"--reclaim-online-evict-after=15s", "--reclaim-online-recover-after=30s", "--reclaim-online-window=10s",
				"--report-bind-address=127.0.0.1:9443", "--report-cert-dir=" + certDir, "--report-url=https://127.0.0.1:9443",
				"--reclaim-growth-per-minute=100",
				"--gpu-loan-interval=2s", "--gpu-loan-checkpoint-time=20s", "--gpu-loan-warm-up=10s", "--gpu-loan-lead=30s", "--gpu-loan-min-loan=15s",
			},
		},
		"a longer day: an hour is two minutes": {
			dayLength: 48 * time.Minute,
			want: []string{
				"--reclaim-usage-source=prometheus", "--prometheus-url=http://127.0.0.1:9090",
				"--prometheus-rate-window=20s",
				"--reclaim-interval=5s", "--reclaim-window=4m0s",
				"--reclaim-cooldown=2m0s", "--reclaim-stale-after=30s",
				"--reclaim-cpu-eviction-delay=20s",
				"--reclaim-online-evict-after=20s", "--reclaim-online-recover-after=1m0s", "--reclaim-online-window=10s",
				"--report-bind-address=127.0.0.1:9443", "--report-cert-dir=" + certDir, "--report-url=https://127.0.0.1:9443",
				"--reclaim-growth-per-minute=50",
				"--gpu-loan-interval=4s", "--gpu-loan-checkpoint-time=40s", "--gpu-loan-warm-up=20s", "--gpu-loan-lead=1m0s", "--gpu-loan-min-loan=30s",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.StateDir, opts.DayLength = stateDir, tc.dayLength
			c := &Cluster{opts: opts, promAddr: "127.0.0.1:9090", reportAddr: "127.0.0.1:9443"}
			if diff := cmp.Diff(tc.want, c.ManagerFlags()); diff != "" {
				t.Errorf("ManagerFlags (-want +got):\n%s", diff)
			}
			if err := opts.reclaimSettings().Validate(); err != nil {
				t.Errorf("the manager refuses the local cluster's reclaim settings: %v", err)
			}
			if err := opts.gpuLoanSettings().Validate(); err != nil {
				t.Errorf("the manager refuses the local cluster's GPU loan settings: %v", err)
			}
		})
	}
}
