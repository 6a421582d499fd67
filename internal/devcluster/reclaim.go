package devcluster

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/gpuloan"
	"github.com/backfill-dev/backfill/internal/manager"
	"github.com/backfill-dev/backfill/internal/reclaim"
)

// devPrometheusRateWindow is four of the local Prometheus's 5 s scrapes.
const devPrometheusRateWindow = 20 * time.Second

// devOnlineWindowMin is two of the local Prometheus's 5 s scrapes: the
// shortest window rate() reads the online signal over.
const devOnlineWindowMin = 10 * time.Second

// reclaimSettings fit the local cluster's compressed day, where an hour
// of the online service's day passes in DayLength/24: the online peak
// looks back two such hours, a node that evicted rests one, CPU evictions
// wait ten minutes of it, and capacity can grow to full within one; a
// node held back by its online pods gives back after ten minutes of harm
// and grows again after half an hour of health, reading the signal over
// half of the time harm takes to evict (at least two scrapes, at most the
// usage's rate window). Usage comes from the local Prometheus, scraped
// every 5 s.
func (o Options) reclaimSettings() reclaim.Settings {
	hour := o.DayLength / 24
	s := reclaim.DefaultSettings()
	s.Interval = 5 * time.Second
	s.Window = max(2*hour, 30*time.Second)
	s.Cooldown = max(hour, 15*time.Second)
	s.CPUEvictionDelay = max(hour/6, 15*time.Second)
	s.StaleAfter = 30 * time.Second
	s.GrowthPerMinute = max(int(100*time.Minute/max(hour, time.Second)), 10)
	s.OnlineEvictAfter = max(hour/6, 15*time.Second)
	s.OnlineRecoverAfter = max(hour/2, 30*time.Second)
	s.OnlineWindow = max(min(devPrometheusRateWindow, s.OnlineEvictAfter/2), devOnlineWindowMin)
	return s
}

// gpuLoanSettings are the GPU loans' production settings on the
// compressed day: its minutes where production has minutes (a lead of 30
// minutes of the day, 20 of checkpoint until measured, 10 of warm-up, a
// loan of at least 15 worth a resume), and a decision every 2 minutes of
// the day, at least a second. The checkpoint slack (1 minute in
// production, no flag) is 5 minutes of the day, so that the notice stays
// within the night.
func (o Options) gpuLoanSettings() gpuloan.Settings {
	minute := o.DayLength / (24 * 60)
	s := gpuloan.DefaultSettings()
	s.Interval = max(2*minute, time.Second).Round(100 * time.Millisecond)
	s.Tide.Lead = 30 * minute
	s.Tide.DefaultCheckpointTime = 20 * minute
	s.Tide.CheckpointSlack = 5 * minute
	s.Tide.MinLoan = 15 * minute
	s.DefaultWarmUp = 10 * minute
	return s
}

// managerOptions are the options of the manager the local cluster runs
// (or tells the user to run): reclaimed capacity from its Prometheus,
// the report endpoint training code posts its progress to, and leader
// election, so that its Lease shows it runs.
func (c *Cluster) managerOptions(metricsAddress string) manager.Options {
	opts := manager.DefaultOptions()
	opts.MetricsAddress = metricsAddress
	opts.HealthAddress = "0"
	opts.LeaderElect = true
	opts.LeaderElectionNamespace = "kube-system"
	opts.UsageSource = manager.UsageSourcePrometheus
	opts.PrometheusURL = "http://" + c.prometheusAddress()
	opts.PrometheusRateWindow = devPrometheusRateWindow
	opts.ReclaimSettings = c.opts.reclaimSettings()
	opts.GPULoanSettings = c.opts.gpuLoanSettings()
	opts.ReportAddress, opts.ReportCertDir, opts.ReportURL = c.reportAddress(), c.reportCertDir(), c.reportURL()
	return opts
}

// waitForReclaimedCapacity waits until every node offers reclaimed
// capacity, so that training submitted once `dev up` returns finds room.
func (c *Cluster) waitForReclaimedCapacity(ctx context.Context) error {
	return poll(ctx, "every node to publish reclaimed capacity", func(ctx context.Context) (bool, error) {
		var nodes corev1.NodeList
		if err := c.client.List(ctx, &nodes); err != nil {
			return false, err
		}
		for _, n := range nodes.Items {
			if colocation.BatchOf(n.Status.Allocatable).MilliCPU == 0 {
				return false, nil
			}
		}
		return len(nodes.Items) > 0, nil
	})
}

// ManagerFlags are the flags of `backfill manager` that give a manager
// started by hand (--manager=false) the local cluster's reclaim settings
// and report endpoint; Prometheus scrapes it at 127.0.0.1:8080, or
// wherever ManagersFile says. Their values are those of managerOptions,
// the options of the manager the cluster runs itself.
func (c *Cluster) ManagerFlags() []string {
	return c.managerOptions("").Flags(
		manager.FlagReclaimUsageSource, manager.FlagPrometheusURL,
		manager.FlagPrometheusRateWindow,
		manager.FlagReclaimInterval, manager.FlagReclaimWindow,
		manager.FlagReclaimCooldown, manager.FlagReclaimStaleAfter,
		manager.FlagReclaimCPUEvictionDelay,
		manager.FlagReclaimOnlineEvictAfter, manager.FlagReclaimOnlineRecoverAfter, manager.FlagReclaimOnlineWindow,
		manager.FlagReportBindAddress, manager.FlagReportCertDir, manager.FlagReportURL,
		manager.FlagReclaimGrowthPerMinute,
		gpuloan.FlagInterval, gpuloan.FlagCheckpointTime, gpuloan.FlagWarmUp, gpuloan.FlagLead, gpuloan.FlagMinLoan,
	)
}
