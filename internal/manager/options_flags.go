package manager

import (
	"fmt"

	"github.com/spf13/pflag"
)

// The names of the manager's flags that other packages hand to a manager
// (the local dev cluster tells one started by hand its settings with
// them). bindFlags binds those flags by these names, so that renaming a
// flag renames it everywhere, and removing one breaks the build of
// whoever still sets it.
const (
	FlagReclaimUsageSource        = "reclaim-usage-source"
	FlagPrometheusURL             = "prometheus-url"
	FlagPrometheusRateWindow      = "prometheus-rate-window"
	FlagReclaimInterval           = "reclaim-interval"
	FlagReclaimWindow             = "reclaim-window"
	FlagReclaimCooldown           = "reclaim-cooldown"
	FlagReclaimStaleAfter         = "reclaim-stale-after"
	FlagReclaimCPUEvictionDelay   = "reclaim-cpu-eviction-delay"
	FlagReclaimOnlineEvictAfter   = "reclaim-online-evict-after"
	FlagReclaimOnlineRecoverAfter = "reclaim-online-recover-after"
	FlagReclaimOnlineWindow       = "reclaim-online-window"
	FlagReclaimGrowthPerMinute    = "reclaim-growth-per-minute"
	FlagReportBindAddress         = "report-bind-address"
	FlagReportCertDir             = "report-cert-dir"
	FlagReportURL                 = "report-url"
	FlagGPULoans                  = "gpu-loans"
)

// Flags renders the named flags of o as `backfill manager` parses them,
// --name=value, in the order given. Each value is the flag's own rendering
// of the field bindFlags binds it to, so a name cannot be paired with
// another setting's value. It panics on a name the manager has no flag
// of: names are the Flag… constants.
func (o Options) Flags(names ...string) []string {
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.bindFlags(fs)
	out := make([]string, 0, len(names))
	for _, name := range names {
		f := fs.Lookup(name)
		if f == nil {
			panic(fmt.Sprintf("backfill manager has no flag --%s", name))
		}
		out = append(out, "--"+name+"="+f.Value.String())
	}
	return out
}
