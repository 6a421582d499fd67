package devcluster

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/backfill-dev/backfill/internal/colocation"
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
	)
}
