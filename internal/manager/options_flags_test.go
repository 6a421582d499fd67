package manager

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// What Flags renders, the manager parses back into the same options.
func TestFlagsParseBack(t *testing.T) {
	want := DefaultOptions()
	want.UsageSource, want.PrometheusURL, want.PrometheusRateWindow = UsageSourcePrometheus, "http://127.0.0.1:9090", 20*time.Second
	s := &want.ReclaimSettings
	s.Interval, s.Window, s.Cooldown, s.StaleAfter = 5*time.Second, 4*time.Minute, 2*time.Minute, 30*time.Second
	s.CPUEvictionDelay, s.OnlineEvictAfter, s.OnlineRecoverAfter = 20*time.Second, 25*time.Second, time.Minute
	s.GrowthPerMinute, s.OnlineWindow = 50, 10*time.Second
	want.ReportAddress, want.ReportCertDir, want.ReportURL = "127.0.0.1:9443", "/tmp/dev/pki/reports", "https://127.0.0.1:9443"

	args := want.Flags(
		FlagReclaimUsageSource, FlagPrometheusURL, FlagPrometheusRateWindow,
		FlagReclaimInterval, FlagReclaimWindow, FlagReclaimCooldown, FlagReclaimStaleAfter,
		FlagReclaimCPUEvictionDelay, FlagReclaimOnlineEvictAfter, FlagReclaimOnlineRecoverAfter, FlagReclaimOnlineWindow, FlagReclaimGrowthPerMinute,
		FlagReportBindAddress, FlagReportCertDir, FlagReportURL,
	)
	if diff := cmp.Diff([]string{"--reclaim-usage-source=prometheus", "--prometheus-url=http://127.0.0.1:9090", "--prometheus-rate-window=20s"}, args[:3]); diff != "" {
		t.Errorf("the first flags (-want +got):\n%s", diff)
	}
	got := DefaultOptions()
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	got.bindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %q: %v", args, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("options parsed from %q (-want +got):\n%s", args, diff)
	}
}

// A name the manager has no flag of is a bug of the caller's.
func TestFlagsPanicsOnAnUnknownName(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Flags rendered --no-such-flag, want a panic")
		}
	}()
	DefaultOptions().Flags("no-such-flag")
}
