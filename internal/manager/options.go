package manager

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"time"

	"github.com/spf13/pflag"

	kubeflowv1 "github.com/backfill-dev/backfill/api/kubeflow/v1"
	"github.com/backfill-dev/backfill/internal/colocation"
	"github.com/backfill-dev/backfill/internal/gpuloan"
	"github.com/backfill-dev/backfill/internal/reclaim"
	"github.com/backfill-dev/backfill/internal/report"
)

// Options are the manager's flags.
type Options struct {
	Kubeconfig              string
	MetricsAddress          string
	HealthAddress           string
	PprofAddress            string
	LeaderElect             bool
	LeaderElectionNamespace string
	LeaderElectionID        string
	LeaseDuration           time.Duration
	DefaultCleanPodPolicy   string
	ClusterDomain           string
	Workers                 int
	QPS                     float32
	Burst                   int
	LogLevel                string
	LogFormat               string
	OfflinePriorityClass    string
	OfflinePriority         int32
	GracePeriod             time.Duration
	StopNotice              time.Duration
	RetireAfter             time.Duration
	GangSchedulerName       string
	ColocationMetrics       bool
	// Reclaim runs training in reclaimed capacity (see internal/reclaim).
	Reclaim              bool
	UsageSource          string
	PrometheusURL        string
	PrometheusRateWindow time.Duration
	ReclaimSettings      reclaim.Settings
	// GPULoans lends online work's idle GPUs to training (see
	// internal/gpuloan).
	GPULoans        bool
	GPULoanSettings gpuloan.Settings
	// Progress reports from training code (see internal/report): off
	// unless ReportAddress is set.
	ReportAddress      string
	ReportCertDir      string
	ReportURL          string
	ReportReviewLimits report.ReviewLimits
}

// The usage sources of --reclaim-usage-source.
const (
	UsageSourcePrometheus = "prometheus"
	UsageSourceMetricsAPI = "metrics-api"
)

// DefaultOptions suit a production cluster.
func DefaultOptions() Options {
	return Options{
		MetricsAddress:        ":8080",
		HealthAddress:         ":8081",
		LeaderElectionID:      "backfill-manager",
		LeaseDuration:         15 * time.Second,
		DefaultCleanPodPolicy: string(kubeflowv1.CleanPodPolicyRunning),
		Workers:               defaultWorkers,
		QPS:                   QPSAuto,
		Burst:                 FallbackBurst,
		LogLevel:              "info",
		LogFormat:             "json",
		OfflinePriorityClass:  colocation.DefaultOfflinePriorityClass,
		OfflinePriority:       colocation.DefaultOfflinePriority,
		GracePeriod:           60 * time.Second,
		StopNotice:            15 * time.Second,
		RetireAfter:           10 * time.Minute,
		GangSchedulerName:     "scheduler-plugins-scheduler",
		ColocationMetrics:     true,
		Reclaim:               true,
		UsageSource:           UsageSourceMetricsAPI,
		PrometheusRateWindow:  2 * time.Minute,
		ReclaimSettings:       reclaim.DefaultSettings(),
		GPULoans:              true,
		GPULoanSettings:       gpuloan.DefaultSettings(),
		ReportReviewLimits:    report.DefaultReviewLimits(),
	}
}

func (o *Options) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig; defaults to $KUBECONFIG, ~/.kube/config, then the in-cluster config.")
	fs.StringVar(&o.MetricsAddress, "metrics-bind-address", o.MetricsAddress, "Address of the /metrics endpoint; 0 turns it off.")
	fs.StringVar(&o.HealthAddress, "health-probe-bind-address", o.HealthAddress, "Address of the /healthz and /readyz endpoints; 0 turns them off.")
	fs.StringVar(&o.PprofAddress, "pprof-bind-address", o.PprofAddress, "Address of Go's /debug/pprof endpoints (heap and CPU profiles of the manager), e.g. 127.0.0.1:6060; empty or 0 turns them off. They tell anyone who reaches them about the manager's memory: keep them on loopback or behind a port-forward.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Elect a leader among manager replicas, so that one reconciles at a time; needed when running more than one.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "Namespace of the leader-election Lease; defaults to the manager's own namespace in a cluster.")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "Name of the leader-election Lease.")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration, "How long a standby waits before taking over a lease its leader stopped renewing.")
	fs.StringVar(&o.DefaultCleanPodPolicy, "default-clean-pod-policy", o.DefaultCleanPodPolicy, "cleanPodPolicy for jobs that set none: All, Running or None. Running stops parameter servers once a job is done (Kubeflow v1 used None).")
	fs.StringVar(&o.ClusterDomain, "cluster-domain", o.ClusterDomain, "Cluster DNS domain appended to the service names in TF_CONFIG, e.g. cluster.local; empty for none.")
	fs.IntVar(&o.Workers, "workers", o.Workers, "Number of TFJobs reconciled at once, 1 to 1000.")
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "How the manager paces its requests to the apiserver (docs/pacing.md). 0: the apiserver's API Priority and Fairness paces them where it applies to the manager and does not exempt it, else a client-side limit of 200 per second and resource type. -1: no client-side limit; refuses to start where the apiserver would not pace the manager either. Above 0: that many requests per second and resource type.")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "With --kube-api-qps above 0: the size of each resource type's token bucket, the requests sent at once before the rate applies; at least --kube-api-qps. Ignored otherwise.")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "Log verbosity: error, info, debug, or a number (higher is more verbose).")
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "Log format: json or text.")
	fs.StringVar(&o.OfflinePriorityClass, "offline-priority-class", o.OfflinePriorityClass, "PriorityClass of training pods that name none; created at start unless it exists.")
	fs.Int32Var(&o.OfflinePriority, "offline-priority", o.OfflinePriority, "Value of --offline-priority-class when the manager creates it; below 0, the priority of pods without a class, so that training yields to online work.")
	fs.DurationVar(&o.StopNotice, "stop-notice", o.StopNotice, "How long before backfill itself stops a running training pod it tells the pod, with the annotations backfill.dev/stop-reason and backfill.dev/stop-at, so that it can save a checkpoint: when its job is suspended (by Kueue's preemption too) or done (cleanPodPolicy), and when the manager evicts it for online pods short of CPU (ReclaimedForOnline; an eviction for memory gives no notice). The pod stops when the notice runs out, or as soon as its job reports a checkpoint made after the notice began. 0 stops at once.")
	fs.DurationVar(&o.RetireAfter, "retire-after", o.RetireAfter, "How long a finished TFJob without ttlSecondsAfterFinished stays in the manager's cache, and its per-job series on /metrics, once its pods ended and were released, before the operator retires it (label backfill.dev/retired): long enough for Prometheus to scrape its final state. A retired job costs the manager a UID and a byte; backfill_tfjobs still counts it. 0 retires a job as soon as it is done.")
	fs.StringVar(&o.GangSchedulerName, "gang-scheduler-name", o.GangSchedulerName, "schedulerName of gang pods when the cluster's gang scheduler is scheduler-plugins (its scheduler's name in your cluster).")
	fs.BoolVar(&o.ColocationMetrics, "colocation-metrics", o.ColocationMetrics, "Export the co-location state metrics (backfill_node_*, backfill_offline_pod_info): the leader then watches every pod and node of the cluster, keeping a small summary of each (name, tier, resources).")
	fs.DurationVar(&o.GracePeriod, "termination-grace-period", o.GracePeriod, "terminationGracePeriodSeconds of training pods whose template sets none: the time to save a checkpoint after SIGTERM.")
	o.bindReclaimFlags(fs)
	o.bindGPULoanFlags(fs)
	o.bindReportFlags(fs)
}

// bindGPULoanFlags binds the flags of GPU loans.
func (o *Options) bindGPULoanFlags(fs *pflag.FlagSet) {
	s := &o.GPULoanSettings
	fs.BoolVar(&o.GPULoans, FlagGPULoans, o.GPULoans, "Lend the GPUs online work leaves idle (at night) to TFJobs and take them back before online work needs them: in each GPU pool (nodes of one nvidia.com/gpu.product) where an online Deployment or StatefulSet has a forecast (the backfill.dev/gpu-schedule annotation, a KEDA ScaledObject's cron triggers, or its replicas history in the Prometheus of --prometheus-url), a TFJob on its GPUs gets the stop notice GPUsReturnedToOnline a checkpoint's time before online work needs them, then pauses (runPolicy.suspend) and resumes when a loan is long enough; a new TFJob starts there only on a loan long enough to reach a checkpoint. Pools with no forecast are left to priority preemption.")
	fs.DurationVar(&s.Interval, gpuloan.FlagInterval, s.Interval, "Time between two decisions of the GPU loans.")
	fs.DurationVar(&s.Tide.DefaultCheckpointTime, gpuloan.FlagCheckpointTime, s.Tide.DefaultCheckpointTime, "How long a TFJob's checkpoint takes until its own handshakes (a checkpoint reported after a notice) measure it: its notice comes this long, plus half again and a minute, before online work needs its GPUs.")
	fs.DurationVar(&s.DefaultWarmUp, gpuloan.FlagWarmUp, s.DefaultWarmUp, "An online GPU workload's time from pod creation to Ready until one of its pods is seen Ready (the longest seen is its warm-up), unless its backfill.dev/gpu-warm-up annotation states it: its GPUs are back this much before its schedule needs them.")
	fs.DurationVar(&s.Tide.Lead, gpuloan.FlagLead, s.Tide.Lead, "How much earlier than the forecast GPUs come back to online work: autoscalers often scale up before their schedule.")
	fs.DurationVar(&s.Tide.MinLoan, gpuloan.FlagMinLoan, s.Tide.MinLoan, "The shortest loan a TFJob starts or resumes on, before its notice, until its own checkpoints show its interval: less work than this between two returns is not worth a start.")
}

// bindReportFlags binds the flags of the progress report endpoint.
func (o *Options) bindReportFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ReportAddress, FlagReportBindAddress, o.ReportAddress, "Address of the HTTPS endpoint training code reports its progress to (step, epoch, checkpoints), e.g. :9443; empty turns reports off. The leader serves it: route its Service to the leader.")
	fs.StringVar(&o.ReportCertDir, FlagReportCertDir, o.ReportCertDir, "Directory of the report endpoint's serving certificate: tls.crt, tls.key and ca.crt (e.g. a cert-manager Certificate's Secret, mounted); a renewed certificate is picked up without a restart, a new CA needs one.")
	fs.StringVar(&o.ReportURL, FlagReportURL, o.ReportURL, "Base URL training pods reach the report endpoint at, e.g. https://backfill-reports.backfill-system.svc:9443; its host must be in the serving certificate.")
	fs.Float64Var(&o.ReportReviewLimits.PerSecond, "report-token-reviews-per-second", o.ReportReviewLimits.PerSecond, "How many TokenReviews a second the report endpoint may ask of the apiserver, for all pods together, in bursts of twice as many; past it a report whose token must be reviewed is answered 503 with Retry-After. A pod's token costs a review when first seen, then at most one a minute: the default serves 3,000 pods reporting without pause.")
	fs.IntVar(&o.ReportReviewLimits.InFlight, "report-token-reviews-in-flight", o.ReportReviewLimits.InFlight, "How many TokenReviews the report endpoint may await from the apiserver at once; past it, 503 with Retry-After. Bounds what a flood of forged tokens costs an apiserver that is slow already.")
}

// bindReclaimFlags binds the flags of reclaimed capacity.
func (o *Options) bindReclaimFlags(fs *pflag.FlagSet) {
	s := &o.ReclaimSettings
	fs.BoolVar(&o.Reclaim, "reclaim", o.Reclaim, "Run TFJob pods in reclaimed capacity: publish per node what online pods request but do not use as backfill.dev/batch-cpu and backfill.dev/batch-memory, give TFJob pods those instead of cpu and memory (a job opts out with the annotation backfill.dev/capacity: requested), and evict offline pods when online use rises. With --reclaim=false TFJob pods keep their cpu and memory requests.")
	fs.StringVar(&o.UsageSource, FlagReclaimUsageSource, o.UsageSource, "Where node usage comes from: metrics-api (metrics.k8s.io, served by metrics-server) or prometheus (the kubelet series in the Prometheus of --prometheus-url, which must scrape the manager).")
	fs.StringVar(&o.PrometheusURL, FlagPrometheusURL, o.PrometheusURL, "Prometheus of --reclaim-usage-source=prometheus, e.g. http://prometheus-operated.monitoring:9090.")
	fs.DurationVar(&o.PrometheusRateWindow, FlagPrometheusRateWindow, o.PrometheusRateWindow, "Window of rate() over the CPU counters in Prometheus: at least four of its scrape intervals.")
	fs.IntVar(&s.Margin.CPU, "reclaim-cpu-margin", s.Margin.CPU, "Percent of each node's CPU never reclaimed: room for online use to rise between two decisions.")
	fs.IntVar(&s.Margin.Memory, "reclaim-memory-margin", s.Margin.Memory, "Percent of each node's memory never reclaimed.")
	fs.IntVar(&s.EvictionMargin.CPU, "reclaim-cpu-eviction-margin", s.EvictionMargin.CPU, "Percent of each node's CPU that online pods may take of the margin before offline pods are evicted (down to the margin whole again); at most --reclaim-cpu-margin.")
	fs.IntVar(&s.EvictionMargin.Memory, "reclaim-memory-eviction-margin", s.EvictionMargin.Memory, "Percent of each node's memory that online pods may take of the margin before offline pods are evicted; at most --reclaim-memory-margin.")
	fs.DurationVar(&s.CPUEvictionDelay, FlagReclaimCPUEvictionDelay, s.CPUEvictionDelay, "How long online CPU use must stay high before offline pods are evicted for CPU: offline pods (CPU weight of a zero request) yield CPU to online pods at once, so short bursts cost training speed, not online latency. Memory evictions never wait.")
	fs.DurationVar(&s.Window, FlagReclaimWindow, s.Window, "How far back the online peak looks: after a burst of online use, reclaimed capacity stays down this long.")
	fs.DurationVar(&s.Interval, FlagReclaimInterval, s.Interval, "Time between two decisions of every node's reclaimed capacity.")
	fs.IntVar(&s.GrowthPerMinute, FlagReclaimGrowthPerMinute, s.GrowthPerMinute, "How fast reclaimed capacity may grow, in percent of a node's capacity per minute; it shrinks at once.")
	fs.IntVar(&s.MinChange, "reclaim-min-change", s.MinChange, "Percent of a node's capacity: smaller changes of its reclaimed capacity are not written.")
	fs.DurationVar(&s.Cooldown, FlagReclaimCooldown, s.Cooldown, "How long a node that evicted offers no room to new offline pods.")
	fs.DurationVar(&s.StaleAfter, FlagReclaimStaleAfter, s.StaleAfter, "Age of a node's newest usage sample past which its reclaimed capacity freezes (no growth, no evictions) until usage is current again.")
	fs.Float64Var(&s.OnlineCPUWait, "reclaim-online-cpu-wait", s.OnlineCPUWait, "Seconds per second a node's online pods may wait for a CPU together, each pod's wait the time at least one of its threads waits (the node agent's measure, else the kubelet's PSI, from --prometheus-url), before the node is held back as if they missed their latency objective; 0 listens to latency objectives only.")
	fs.IntVar(&s.OnlineStep, "reclaim-online-step", s.OnlineStep, "Percent of a node's CPU a node held back by its online pods gives back at each step, by evicting offline pods.")
	fs.DurationVar(&s.OnlineEvictAfter, FlagReclaimOnlineEvictAfter, s.OnlineEvictAfter, "How long online pods must miss their objective (or wait for CPU) beside offline pods, without a reading between where they do not, before the node gives back a step by evicting; until then it only stops growing. Steps repeat after each --reclaim-cooldown while the harm lasts. Longer than --reclaim-online-window.")
	fs.DurationVar(&s.OnlineRecoverAfter, FlagReclaimOnlineRecoverAfter, s.OnlineRecoverAfter, "How long the online signal must stay healthy before a node held back by it grows again.")
	fs.DurationVar(&s.OnlineWindow, FlagReclaimOnlineWindow, s.OnlineWindow, "Window of rate() over the online pods' latency histograms and CPU wait in Prometheus: how far back one reading of the online signal looks. Shorter than --reclaim-online-evict-after, since a reading stays harmful for a window after the harm ends, and at least two of Prometheus's scrape intervals.")
}

// Validate says what is wrong with the flags and how to fix it.
func (o *Options) Validate() error {
	switch kubeflowv1.CleanPodPolicy(o.DefaultCleanPodPolicy) {
	case kubeflowv1.CleanPodPolicyAll, kubeflowv1.CleanPodPolicyRunning, kubeflowv1.CleanPodPolicyNone:
	default:
		return fmt.Errorf("--default-clean-pod-policy=%q: must be All, Running or None", o.DefaultCleanPodPolicy)
	}
	if o.Workers < 1 || o.Workers > maxWorkers {
		return fmt.Errorf("--workers=%d: must be from 1 to %d", o.Workers, maxWorkers)
	}
	if err := o.validatePacing(); err != nil {
		return err
	}
	if o.LeaseDuration < 2*time.Second {
		return fmt.Errorf("--leader-election-lease-duration=%v: must be at least 2s", o.LeaseDuration)
	}
	if o.LogFormat != "json" && o.LogFormat != "text" {
		return fmt.Errorf("--log-format=%q: must be json or text", o.LogFormat)
	}
	if _, err := LogLevel(o.LogLevel); err != nil {
		return err
	}
	if o.OfflinePriorityClass == "" {
		return fmt.Errorf("--offline-priority-class is empty: name the PriorityClass of training pods, e.g. %s", colocation.DefaultOfflinePriorityClass)
	}
	if o.OfflinePriority >= 0 {
		return fmt.Errorf("--offline-priority=%d: must be below 0, the priority of online pods without a PriorityClass, or training would preempt them", o.OfflinePriority)
	}
	if o.StopNotice < 0 || o.StopNotice > 10*time.Minute {
		return fmt.Errorf("--stop-notice=%v: must be from 0 to 10m", o.StopNotice)
	}
	if o.RetireAfter < 0 {
		return fmt.Errorf("--retire-after=%v: must be 0 or more, e.g. 10m", o.RetireAfter)
	}
	if o.GracePeriod < 0 || o.GracePeriod%time.Second != 0 {
		return fmt.Errorf("--termination-grace-period=%v: must be whole seconds, 0 or more", o.GracePeriod)
	}
	if a := o.PprofAddress; a != "" && a != "0" {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return fmt.Errorf("--pprof-bind-address=%q: want host:port or :port, e.g. 127.0.0.1:6060, or 0 for none", a)
		}
	}
	if err := o.validateReports(); err != nil {
		return err
	}
	if o.GPULoans {
		if err := o.GPULoanSettings.Validate(); err != nil {
			return err
		}
	}
	if o.Reclaim {
		return o.validateReclaim()
	}
	return nil
}

// defaultWorkers: a pass waits on round trips (its creates, then its
// status), so it takes many at once to keep the apiserver's seats busy.
const defaultWorkers = 32

// maxWorkers bounds --workers: more is a typo rather than a need, since
// workers beyond the requests the apiserver serves the manager at once
// only wait for one another.
const maxWorkers = 1000

// validatePacing checks --kube-api-qps and --kube-api-burst; pacing.go
// says what they mean.
func (o *Options) validatePacing() error {
	qps := float64(o.QPS)
	if math.IsNaN(qps) || math.IsInf(qps, 0) || (o.QPS < 0 && o.QPS != QPSNoLimit) {
		return fmt.Errorf("--kube-api-qps=%v: must be 0 (the apiserver paces the manager where it can, the default), -1 (no client-side limit) or a rate above 0, e.g. 200", o.QPS)
	}
	if o.Burst < 1 {
		return fmt.Errorf("--kube-api-burst=%d: must be at least 1", o.Burst)
	}
	if o.QPS > 0 && float32(o.Burst) < o.QPS {
		return fmt.Errorf("--kube-api-burst=%d is below --kube-api-qps=%v: the token bucket would not hold one second of requests; set it to at least %v (twice is usual)", o.Burst, o.QPS, math.Ceil(qps))
	}
	return nil
}

// validateReports checks the flags of the progress report endpoint: all
// three or none.
func (o *Options) validateReports() error {
	if o.ReportAddress == "" {
		if o.ReportURL != "" || o.ReportCertDir != "" {
			return fmt.Errorf("--report-url and --report-cert-dir need --report-bind-address (e.g. :9443): reports are off without it")
		}
		return nil
	}
	if _, port, err := net.SplitHostPort(o.ReportAddress); err != nil || port == "" {
		return fmt.Errorf("--report-bind-address=%q: want host:port or :port, e.g. :9443", o.ReportAddress)
	}
	if o.ReportCertDir == "" {
		return fmt.Errorf("--report-bind-address needs --report-cert-dir: a directory holding tls.crt, tls.key and ca.crt")
	}
	if o.ReportURL == "" {
		return fmt.Errorf("--report-bind-address needs --report-url: the base URL training pods reach it at, e.g. https://backfill-reports.backfill-system.svc:9443")
	}
	u, err := url.Parse(o.ReportURL)
	if err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("--report-url=%q: want an https URL with no path, e.g. https://backfill-reports.backfill-system.svc:9443", o.ReportURL)
	}
	return o.validateReviewLimits()
}

// maxReviewsInFlight bounds --report-token-reviews-in-flight: more would
// let forged tokens take a good share of the apiserver's seats.
const maxReviewsInFlight = 1000

// validateReviewLimits checks the limits of the report endpoint's
// TokenReviews: a limit of 0 would refuse every new token.
func (o *Options) validateReviewLimits() error {
	l := o.ReportReviewLimits
	if math.IsNaN(l.PerSecond) || math.IsInf(l.PerSecond, 0) || l.PerSecond <= 0 {
		return fmt.Errorf("--report-token-reviews-per-second=%v: must be above 0, e.g. %v: with none, no new token could report", l.PerSecond, report.DefaultReviewLimits().PerSecond)
	}
	if l.InFlight < 1 || l.InFlight > maxReviewsInFlight {
		return fmt.Errorf("--report-token-reviews-in-flight=%d: must be from 1 to %d, e.g. %d", l.InFlight, maxReviewsInFlight, report.DefaultReviewLimits().InFlight)
	}
	return nil
}

// validateReclaim checks the flags of reclaimed capacity.
func (o *Options) validateReclaim() error {
	if err := o.ReclaimSettings.Validate(); err != nil {
		return err
	}
	switch o.UsageSource {
	case UsageSourceMetricsAPI:
		return nil
	case UsageSourcePrometheus:
	default:
		return fmt.Errorf("--reclaim-usage-source=%q: must be %s or %s", o.UsageSource, UsageSourceMetricsAPI, UsageSourcePrometheus)
	}
	if o.PrometheusURL == "" {
		return fmt.Errorf("--reclaim-usage-source=prometheus needs --prometheus-url, e.g. http://prometheus-operated.monitoring:9090")
	}
	if u, err := url.Parse(o.PrometheusURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--prometheus-url=%q: want an http(s) URL such as http://prometheus-operated.monitoring:9090", o.PrometheusURL)
	}
	if o.PrometheusRateWindow < time.Second {
		return fmt.Errorf("--prometheus-rate-window=%v: must be at least 1s, e.g. 2m", o.PrometheusRateWindow)
	}
	if !o.ColocationMetrics {
		return fmt.Errorf("--reclaim-usage-source=prometheus needs --colocation-metrics: it tells offline from online use by the manager's backfill_offline_pod_info")
	}
	return nil
}
